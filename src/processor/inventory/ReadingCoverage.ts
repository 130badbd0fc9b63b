import type { Gpu } from "../../domain/Gpu.ts"
import type { GpuFailure, NodeReading } from "../../domain/NodeReading.ts"

const busIdPattern = /^(?:([0-9a-f]+):)?([0-9a-f]+):([0-9a-f]+)\.([0-9a-f]+)$/i

/**
 * A PCI bus id in one spelling: the XML writes an 8-digit domain (`00000000:1B:00.0`), the
 * "Unable to determine the device handle" line a 4-digit one (`0000:1b:00.0`).
 */
const canonicalBusId = (busId: string): string => {
  const parts = busIdPattern.exec(busId.trim())
  if (parts === null) return busId.trim().toLowerCase()
  const [, domain, bus, device, fn] = parts
  const number = (hex: string | undefined) => Number.parseInt(hex ?? "0", 16).toString(16)
  return `${number(domain)}:${number(bus)}:${number(device)}.${number(fn)}`
}

/** Whether a GPU nvidia-smi could not read may be `gpu`: by PCI bus id when it has one, else by index. */
const mayBe = (failure: GpuFailure, gpu: Gpu): boolean => {
  if (failure.pciBusId !== undefined) {
    return gpu.pciBusId === undefined || canonicalBusId(gpu.pciBusId) === canonicalBusId(failure.pciBusId)
  }
  if (failure.index !== undefined) return gpu.index === failure.index
  return true
}

/**
 * Which GPUs a reading proves gone from its node. A GPU that a complete reading does not report is
 * gone. A partial reading proves less: a GPU it does not report is gone only when none of the GPUs
 * nvidia-smi listed but could not read may be it (same PCI bus id, or same index when the failure
 * names no bus id; a failure that names neither may be any GPU), and nothing is gone when the
 * reading accounts for fewer GPUs than nvidia-smi says are attached.
 */
export const provesAbsent = (reading: NodeReading): ((gpu: Gpu) => boolean) => {
  const accountedFor = reading.gpus.length + reading.failures.length
  if (reading.attachedGpus !== undefined && reading.attachedGpus > accountedFor) return () => false
  if (reading.failures.length === 0) return () => true
  return (gpu) => !reading.failures.some((failure) => mayBe(failure, gpu))
}
