import type { Gpu } from "./Gpu.ts"
import type { GpuRecord } from "./GpuRecord.ts"
import type { KnownGpu } from "./KnownGpu.ts"

/** The pod of a record's `source` (`<namespace>/<pod>`); a file's path is its own name with no namespace. */
const podOf = (source: string): KnownGpu["pod"] => {
  const slash = source.indexOf("/")
  return slash <= 0 || source.indexOf("/", slash + 1) !== -1
    ? { namespace: "", name: source }
    : { namespace: source.slice(0, slash), name: source.slice(slash + 1) }
}

/**
 * What a record says of its GPU, as the inventory's entry would keep it: where the GPU is, the GPU as
 * read, its versions and health. A hub knows its GPUs from the clusters' records alone; `before` is the
 * entry of the GPU's previous record, whose first sighting it keeps.
 */
export const knownGpuOfRecord = (record: GpuRecord, before: KnownGpu | undefined): KnownGpu => {
  const time = new Date(record.time)
  const gpu: Gpu = {
    index: record.index,
    uuid: record.uuid,
    ...(record.gpu === "" ? {} : { serial: record.gpu }),
    ...(record.product === undefined ? {} : { product: record.product }),
    ...(record.pciBusId === undefined ? {} : { pciBusId: record.pciBusId }),
    ...(record.moduleId === undefined ? {} : { moduleId: record.moduleId }),
    ...(record.migMode === undefined ? {} : { migMode: record.migMode }),
    ...(record.chassis === "" ? {} : { platform: { chassisSerial: record.chassis } }),
    ...(record.migDevices === undefined ? {} : { migDevices: record.migDevices }),
  }
  return {
    uuid: record.uuid,
    node: record.node,
    machine: record.machine,
    ...(record.providerId === undefined ? {} : { providerId: record.providerId }),
    pod: podOf(record.source),
    gpu,
    ...(record.driverVersion === undefined ? {} : { driverVersion: record.driverVersion }),
    ...(record.cudaVersion === undefined ? {} : { cudaVersion: record.cudaVersion }),
    serialShared: record.serialShared,
    ...(record.health === undefined ? {} : { health: record.health }),
    firstSeen: before?.firstSeen ?? time,
    lastSeen: time,
    lastReported: time,
  }
}
