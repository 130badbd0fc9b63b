import {
  currentPoolSlices,
  type DeviceAttribute,
  type ResourceSlice,
  type SliceDevice,
} from "../../../kubeclient/resource/ResourceSlice.ts"

/**
 * What NVIDIA's DRA driver publishes of a node's GPUs in its ResourceSlices (driver `gpu.nvidia.com`, one
 * pool per node named after the node; `cmd/gpu-kubelet-plugin/deviceinfo.go`): a GPU with MIG off as a
 * device `type: gpu`; a GPU with MIG on only through its MIG devices (`type: mig`, with `parentUUID`,
 * `profile` and the parent's product, PCI address and driver version). No serial is published.
 */

/** The driver name NVIDIA's GPU kubelet plugin publishes under (`DriverName` in cmd/gpu-kubelet-plugin/main.go). */
export const nvidiaGpuDriver = "gpu.nvidia.com"

/** The field selector that keeps only the NVIDIA GPU driver's slices (its ComputeDomain plugin publishes apart). */
export const nvidiaGpuDriverSelector = `spec.driver=${nvidiaGpuDriver}`

export interface DraMigDevice {
  /** `MIG-…` */
  readonly uuid: string
  /** `1g.5gb`, with its dots, as NVML names it; absent when the slice has none. */
  readonly profile?: string
}

/** One physical GPU as the slices describe it. */
export interface DraGpu {
  /** `GPU-…` */
  readonly uuid: string
  readonly product?: string
  /** In nvidia-smi's form (`00000000:65:00.0`), so records read both ways compare equal. */
  readonly pciBusId?: string
  /** As published: a semantic version without leading zeros (`535.104.5` for nvidia-smi's `535.104.05`). */
  readonly driverVersion?: string
  /** Sorted by UUID; empty for a GPU with MIG off. */
  readonly migDevices: ReadonlyArray<DraMigDevice>
}

/** A node's GPUs from the current generation of its pool. */
export interface DraNodeDevices {
  readonly node: string
  readonly generation: number
  /** Whether every slice of the pool's generation is known (`resourceSliceCount`). */
  readonly complete: boolean
  /** Sorted by PCI bus id (nvidia-smi's default order), GPUs without one last by UUID. */
  readonly gpus: ReadonlyArray<DraGpu>
}

const stringOf = (attribute: DeviceAttribute | undefined): string | undefined =>
  attribute?.string !== undefined && attribute.string !== "" ? attribute.string : undefined

const versionOf = (attribute: DeviceAttribute | undefined): string | undefined =>
  attribute?.version !== undefined && attribute.version !== "" ? attribute.version : stringOf(attribute)

/**
 * nvidia-smi's form of a DRA PCI address: the domain widened to 8 hex digits and upper case
 * (`0000:65:00.0` → `00000000:65:00.0`); anything else is kept as it is.
 */
export const smiPciBusIdOf = (draPciBusId: string): string => {
  const match = /^([0-9a-fA-F]{1,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-9a-fA-F])$/.exec(draPciBusId)
  if (match === null) return draPciBusId
  const [, domain = "", bus = "", device = "", fn = ""] = match
  return `${domain.padStart(8, "0")}:${bus}:${device}.${fn}`.toUpperCase()
}

/** A key equal for nvidia-smi's and the driver's spelling of one PCI address. */
export const pciKeyOf = (pciBusId: string): string => smiPciBusIdOf(pciBusId).toLowerCase()

/** v25.12 and later publish the qualified key; v25.3 and v25.8 the driver-local `pcieBusID`. */
const pciOf = (device: SliceDevice): string | undefined => {
  const value = stringOf(device.attributes["resource.kubernetes.io/pciBusID"]) ?? stringOf(device.attributes.pcieBusID)
  return value === undefined ? undefined : smiPciBusIdOf(value)
}

interface GpuFields {
  product?: string | undefined
  pciBusId?: string | undefined
  driverVersion?: string | undefined
  readonly migDevices: Array<DraMigDevice>
}

const fieldsOf = (device: SliceDevice): Omit<GpuFields, "migDevices"> => {
  const product = stringOf(device.attributes.productName)
  const pciBusId = pciOf(device)
  const driverVersion = versionOf(device.attributes.driverVersion)
  return {
    ...(product === undefined ? {} : { product }),
    ...(pciBusId === undefined ? {} : { pciBusId }),
    ...(driverVersion === undefined ? {} : { driverVersion }),
  }
}

const byPciThenUuid = (left: DraGpu, right: DraGpu): number => {
  if (left.pciBusId !== undefined && right.pciBusId !== undefined && left.pciBusId !== right.pciBusId) {
    return pciKeyOf(left.pciBusId) < pciKeyOf(right.pciBusId) ? -1 : 1
  }
  if (left.pciBusId !== undefined && right.pciBusId === undefined) return -1
  if (left.pciBusId === undefined && right.pciBusId !== undefined) return 1
  return left.uuid < right.uuid ? -1 : left.uuid > right.uuid ? 1 : 0
}

/**
 * The GPUs of a node from its pool's slices (only those of the highest generation count): full GPUs by
 * their `uuid`, GPUs in MIG mode by their MIG devices' `parentUUID`, with the MIG devices on them. Devices
 * of another type (`vfio`) and devices without a UUID (DynamicMIG's abstract placements) are left out.
 */
export const draNodeDevicesOf = (node: string, slices: Iterable<ResourceSlice>): DraNodeDevices => {
  const pool = currentPoolSlices(slices)
  const gpus = new Map<string, GpuFields>()
  const gpuOf = (uuid: string): GpuFields => {
    let gpu = gpus.get(uuid)
    if (gpu === undefined) {
      gpu = { migDevices: [] }
      gpus.set(uuid, gpu)
    }
    return gpu
  }
  for (const slice of pool.slices) {
    for (const device of slice.devices) {
      const type = stringOf(device.attributes.type)
      const uuid = stringOf(device.attributes.uuid)
      if (uuid === undefined) continue
      if (type === "gpu") {
        Object.assign(gpuOf(uuid), fieldsOf(device))
      } else if (type === "mig") {
        const parent = stringOf(device.attributes.parentUUID)
        if (parent === undefined) continue
        const gpu = gpuOf(parent)
        // The parent is not published while MIG is on: its product, PCI and driver come with its MIG devices.
        const fields = fieldsOf(device)
        gpu.product ??= fields.product
        gpu.pciBusId ??= fields.pciBusId
        gpu.driverVersion ??= fields.driverVersion
        const profile = stringOf(device.attributes.profile)
        gpu.migDevices.push(profile === undefined ? { uuid } : { uuid, profile })
      }
    }
  }
  const result: Array<DraGpu> = []
  for (const [uuid, fields] of gpus) {
    result.push({
      uuid,
      ...(fields.product === undefined ? {} : { product: fields.product }),
      ...(fields.pciBusId === undefined ? {} : { pciBusId: fields.pciBusId }),
      ...(fields.driverVersion === undefined ? {} : { driverVersion: fields.driverVersion }),
      migDevices: [...fields.migDevices].sort((left, right) => (left.uuid < right.uuid ? -1 : 1)),
    })
  }
  return { node, generation: pool.generation, complete: pool.complete, gpus: result.sort(byPciThenUuid) }
}

/**
 * What of a node's devices calls for a new reading: the pool's generation and every GPU's identity (UUID,
 * product, PCI address, driver version, MIG devices). Two equal keys mean a slice update that changed
 * nothing of identity (device order after a plugin restart, health taints, capacity).
 */
export const identityKeyOf = (devices: DraNodeDevices): string =>
  JSON.stringify([
    devices.generation,
    devices.complete,
    devices.gpus.map((gpu) => [
      gpu.uuid,
      gpu.product ?? "",
      gpu.pciBusId ?? "",
      gpu.driverVersion ?? "",
      gpu.migDevices.map((mig) => `${mig.uuid}/${mig.profile ?? ""}`),
    ]),
  ])
