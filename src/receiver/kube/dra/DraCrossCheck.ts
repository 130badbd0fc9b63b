import type { Gpu } from "../../../domain/Gpu.ts"
import type { NodeReading } from "../../../domain/NodeReading.ts"
import type { DraNodeDevices } from "./DraDevices.ts"

/**
 * What a DRA node's ResourceSlices alone say of its GPUs, when no nvidia-smi reading is possible: UUID,
 * product, PCI address, driver version and MIG devices, no serial. Each GPU's index is its rank by PCI bus
 * id among the node's GPUs, the order nvidia-smi numbers them in by default.
 */
export const sliceOnlyReading = (devices: DraNodeDevices): NodeReading => {
  const driverVersion = devices.gpus.find((gpu) => gpu.driverVersion !== undefined)?.driverVersion
  return {
    gpus: devices.gpus.map(
      (gpu, index): Gpu => ({
        index,
        uuid: gpu.uuid,
        ...(gpu.product === undefined ? {} : { product: gpu.product }),
        ...(gpu.pciBusId === undefined ? {} : { pciBusId: gpu.pciBusId }),
        ...(gpu.migDevices.length === 0 ? {} : { migDevices: gpu.migDevices }),
      }),
    ),
    ...(driverVersion === undefined ? {} : { driverVersion }),
    failures: [],
    format: "resourceslices",
  }
}

/** A reading checked against the node's slices: the reading with MIG devices added, and the UUIDs they disagree on. */
export interface CrossChecked {
  readonly reading: NodeReading
  /** UUIDs nvidia-smi reports that the slices do not list, sorted. */
  readonly missingFromSlices: ReadonlyArray<string>
  /** UUIDs the slices list that nvidia-smi does not report, sorted. */
  readonly missingFromReading: ReadonlyArray<string>
}

/**
 * Checks an nvidia-smi reading against the node's slices: the reading stays the truth; each GPU it reports
 * gets the MIG devices the slices list under its UUID (as `parentUUID`). A GPU nvidia-smi listed but could
 * not read is not counted missing from the reading.
 */
export const crossCheck = (reading: NodeReading, devices: DraNodeDevices): CrossChecked => {
  const sliceGpus = new Map(devices.gpus.map((gpu) => [gpu.uuid, gpu]))
  const readUuids = new Set(reading.gpus.map((gpu) => gpu.uuid))
  const gpus = reading.gpus.map((gpu): Gpu => {
    const migDevices = sliceGpus.get(gpu.uuid)?.migDevices ?? []
    return migDevices.length === 0 ? gpu : { ...gpu, migDevices }
  })
  const missingFromSlices = [...readUuids].filter((uuid) => !sliceGpus.has(uuid)).sort()
  const missingFromReading =
    reading.failures.length > 0 ? [] : [...sliceGpus.keys()].filter((uuid) => !readUuids.has(uuid)).sort()
  return { reading: { ...reading, gpus }, missingFromSlices, missingFromReading }
}

/** Identifies one disagreement of a node, so it is warned of once per node and change. */
export const mismatchKeyOf = (checked: CrossChecked): string =>
  checked.missingFromSlices.length === 0 && checked.missingFromReading.length === 0
    ? ""
    : `${checked.missingFromSlices.join(",")}|${checked.missingFromReading.join(",")}`
