import type { JsonObject } from "../api/Json.ts"
import { migProfiles } from "../catalog/GpuModel.ts"
import type { SeededRandom } from "../catalog/SeededRandom.ts"
import type { HostGpu, SimulatedHost } from "../catalog/SimulatedHost.ts"

/** The driver name NVIDIA's DRA driver publishes its GPUs under (`DriverName` in cmd/gpu-kubelet-plugin). */
export const nvidiaDraDriver = "gpu.nvidia.com"

/** One device of a ResourceSlice (`resource.k8s.io/v1`, flat: attributes and capacity beside the name). */
export interface SliceDevice {
  readonly name: string
  /** The GPU this device is, or is carved from: its own UUID for a full GPU, the parent's for a MIG device. */
  readonly gpuUuid: string
  readonly device: JsonObject
}

/**
 * The devices the GPU kubelet plugin publishes for one GPU with default feature gates: the full GPU
 * `gpu-<minor>` when MIG is off; when MIG is on only its MIG devices
 * `gpu-<minor>-mig-<profile without dots>-<GI profile id>-<placement start>`, and never the parent.
 */
export const gpuDevices = (host: SimulatedHost, gpu: HostGpu): ReadonlyArray<SliceDevice> => {
  const common = commonAttributes(host)
  const pciBusId = { string: qualifiedPciBusId(gpu) }
  const minor = gpu.slot.minorNumber
  const identity = gpu.identity
  if (identity.migProfiles.length === 0)
    return [
      {
        name: `gpu-${minor}`,
        gpuUuid: identity.uuid,
        device: {
          name: `gpu-${minor}`,
          attributes: {
            ...common,
            "resource.kubernetes.io/pciBusID": pciBusId,
            type: { string: "gpu" },
            uuid: { string: identity.uuid },
          },
          capacity: { memory: { value: binaryQuantity(host.model.memoryMiB * 1024 * 1024) } },
        },
      },
    ]
  const ordinals = new Map<string, number>()
  return identity.migProfiles.flatMap((profileName, index): SliceDevice[] => {
    const profile = migProfiles[profileName]
    const uuid = identity.migUuids[index]
    if (profile === undefined || uuid === undefined) return []
    const ordinal = ordinals.get(profileName) ?? 0
    ordinals.set(profileName, ordinal + 1)
    const start = profile.placementSize === 8 ? 0 : ordinal * profile.placementSize
    const name = `gpu-${minor}-mig-${rfc1123(profileName.replaceAll(".", ""))}-${profile.gpuInstanceProfileId}-${start}`
    const capacity: JsonObject = {
      copyEngines: { value: String(profile.copyEngines) },
      decoders: { value: String(profile.decoders) },
      encoders: { value: "0" },
      jpegEngines: { value: String(profile.jpegs) },
      memory: { value: binaryQuantity(profile.memoryMiB * 1024 * 1024) },
      multiprocessors: { value: String(profile.multiprocessors) },
      ofaEngines: { value: String(profile.ofas) },
    }
    for (let slice = start; slice < start + profile.placementSize; slice++)
      capacity[`memorySlice${slice}`] = { value: "1" }
    return [
      {
        name,
        gpuUuid: identity.uuid,
        device: {
          name,
          attributes: {
            ...common,
            parentUUID: { string: identity.uuid },
            profile: { string: profileName },
            "resource.kubernetes.io/pciBusID": pciBusId,
            type: { string: "mig" },
            uuid: { string: uuid },
          },
          capacity,
        },
      },
    ]
  })
}

/** Every device of a host, in the random order the plugin's Go maps give them. */
export const hostDevices = (host: SimulatedHost, random: SeededRandom): SliceDevice[] =>
  shuffled(
    host.gpus.flatMap((gpu) => gpuDevices(host, gpu)),
    random,
  )

export interface SliceSpec {
  readonly nodeName: string
  readonly nodeUid: string
  /** `spec.pool.generation`: 1 for a new pool, kept by in-place updates. */
  readonly generation: number
  readonly devices: ReadonlyArray<SliceDevice>
}

/**
 * The ResourceSlice of one node as the driver's resourceslice controller (k8s.io/dynamic-resource-allocation
 * v0.34, driver v25.12) writes it: named by the API server from `<node>-gpu.nvidia.com-`, owned by the
 * Node, one pool named after the node holding every device in one slice.
 */
export const resourceSliceObject = (spec: SliceSpec): JsonObject => ({
  apiVersion: "resource.k8s.io/v1",
  kind: "ResourceSlice",
  metadata: {
    generateName: `${spec.nodeName}-${nvidiaDraDriver}-`,
    ownerReferences: [{ apiVersion: "v1", kind: "Node", name: spec.nodeName, uid: spec.nodeUid, controller: true }],
  },
  spec: {
    driver: nvidiaDraDriver,
    nodeName: spec.nodeName,
    pool: { name: spec.nodeName, generation: spec.generation, resourceSliceCount: 1 },
    devices: spec.devices.map((device) => device.device),
  },
})

/** Attributes every device of a host shares, with go-nvlib's spellings. */
const commonAttributes = (host: SimulatedHost): JsonObject => ({
  architecture: { string: host.model.architecture },
  brand: { string: brandOf(host.model.productBrand) },
  cudaComputeCapability: { version: semver(host.model.computeCapability) },
  cudaDriverVersion: { version: semver(host.driver.cudaVersion) },
  driverVersion: { version: semver(host.driver.version) },
  productName: { string: host.model.productName },
})

/** nvidia-smi's product brand as go-nvlib's `GetBrandAsString` names the same NVML brand. */
const brandOf = (productBrand: string): string => {
  switch (productBrand) {
    case "NVIDIA":
      return "Nvidia"
    case "NVIDIA RTX":
      return "NvidiaRTX"
    default:
      return productBrand
  }
}

/**
 * A version as Masterminds semver prints it after coercion: three parts, leading zeros dropped
 * (`535.104.05` → `535.104.5`, `8.0` → `8.0.0`).
 */
export const semver = (version: string): string => {
  const parts = version.split(".").map((part) => String(Number.parseInt(part, 10)))
  while (parts.length < 3) parts.push("0")
  return parts.slice(0, 3).join(".")
}

/** go-nvlib's bus id: lower case, the domain cut to 4 hex digits (`0000:65:00.0` for nvidia-smi's `00000000:65:00.0`). */
export const qualifiedPciBusId = (gpu: HostGpu): string => {
  const hex = (value: number, width: number) => value.toString(16).padStart(width, "0")
  return `${hex(gpu.slot.domain & 0xffff, 4)}:${hex(gpu.slot.bus, 2)}:${hex(gpu.slot.device, 2)}.0`
}

/** A byte count as a BinarySI Quantity in canonical form (`85899345920` → `80Gi`). */
export const binaryQuantity = (bytes: number): string => {
  const suffixes = ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"]
  for (const [index, suffix] of suffixes.entries()) {
    const unit = 1024 ** (6 - index)
    if (bytes >= unit && bytes % unit === 0) return `${bytes / unit}${suffix}`
  }
  return String(bytes)
}

const rfc1123 = (text: string): string => text.toLowerCase().replace(/[^a-z0-9.-]/g, "-")

const shuffled = <T>(items: T[], random: SeededRandom): T[] => {
  for (let index = items.length - 1; index > 0; index--) {
    const other = random.int(0, index)
    const swap = items[index] as T
    items[index] = items[other] as T
    items[other] = swap
  }
  return items
}
