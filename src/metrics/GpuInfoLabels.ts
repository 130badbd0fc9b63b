import type { GpuRecord } from "../domain/GpuRecord.ts"
import { chassisOf, type KnownGpu } from "../domain/KnownGpu.ts"

/** The record fields the per-GPU series are made of: `gpu_serials_gpu_info`'s labels, and the health ones' state. */
export type GpuInfoFields = Pick<
  GpuRecord,
  "cluster" | "node" | "uuid" | "gpu" | "chassis" | "product" | "pciBusId" | "health"
>

/**
 * The labels of one `gpu_serials_gpu_info` series: dcgm-exporter's own label names and spellings
 * (`UUID`, `pci_bus_id`, `modelName`, `Hostname`), so `on(UUID)` joins it with DCGM's series, plus
 * what only gpu-serials knows. Absent values are empty strings, which Prometheus reads as no label.
 */
export type GpuInfoLabels = {
  /** `GPU-` and the lowercase hex UUID, as NVML and DCGM print it. */
  readonly UUID: string
  /** `00000000:3B:00.0`: eight hex digits of domain, uppercase hex, as DCGM prints it. */
  readonly pci_bus_id: string
  /** The product name as NVML reports it (`NVIDIA H100 80GB HBM3`). */
  readonly modelName: string
  /** The Kubernetes node name: what dcgm-exporter writes when it runs in a cluster (`NODE_NAME`). */
  readonly Hostname: string
  readonly serial: string
  readonly chassis: string
  readonly cluster: string
}

const dcgmPciAddress = /^[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-7]$/
const pciAddress = /^(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})\.([0-7])$/i

/**
 * A PCI bus id spelled as DCGM spells it. nvidia-smi prints the same form, but older drivers and some
 * tools print a four-digit domain (`0000:3b:00.0`) or none; those are widened. Anything that is not a
 * PCI address is kept as reported.
 */
export const dcgmPciBusId = (reported: string | undefined): string => {
  if (reported === undefined) return ""
  if (dcgmPciAddress.test(reported)) return reported
  const text = reported.trim()
  const match = pciAddress.exec(text)
  if (match === null) return text
  const [, domain = "0", bus = "", device = "", func = ""] = match
  return `${domain.padStart(8, "0")}:${bus.padStart(2, "0")}:${device.padStart(2, "0")}.${func}`.toUpperCase()
}

const dcgmGpuUuid = /^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const bareUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const gpuUuid = /^gpu-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i

/** A GPU UUID spelled as DCGM spells it: `GPU-` then lowercase hex; anything else is kept as reported. */
export const dcgmUuid = (reported: string): string => {
  if (dcgmGpuUuid.test(reported)) return reported
  const text = reported.trim()
  if (bareUuid.test(text)) return `GPU-${text.toLowerCase()}`
  const match = gpuUuid.exec(text)
  return match === null ? text : `GPU-${(match[1] ?? "").toLowerCase()}`
}

/** The `gpu_serials_gpu_info` labels of a GPU, from the fields of its record. */
export const gpuInfoLabels = (record: GpuInfoFields): GpuInfoLabels => ({
  UUID: dcgmUuid(record.uuid),
  pci_bus_id: dcgmPciBusId(record.pciBusId),
  modelName: record.product?.trim() ?? "",
  Hostname: record.node,
  serial: record.gpu,
  chassis: record.chassis,
  cluster: record.cluster,
})

/** The record fields of a known GPU that its per-GPU series are made of. */
export const knownGpuInfoFields = (known: KnownGpu, cluster: string): GpuInfoFields => ({
  cluster,
  node: known.node,
  uuid: known.uuid,
  gpu: known.gpu.serial ?? "",
  chassis: chassisOf(known),
  ...(known.gpu.product === undefined ? {} : { product: known.gpu.product }),
  ...(known.gpu.pciBusId === undefined ? {} : { pciBusId: known.gpu.pciBusId }),
  ...(known.health === undefined ? {} : { health: known.health }),
})
