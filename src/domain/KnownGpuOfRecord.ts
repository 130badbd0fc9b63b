import type { Gpu } from "./Gpu.ts"
import type { GpuRecord } from "./GpuRecord.ts"
import { type KnownGpu, sameGpu } from "./KnownGpu.ts"
import type { PodRef } from "./NodeObservation.ts"

/** The pod of a record's `source` (`<namespace>/<pod>`); a file's path is its own name with no namespace. */
export const podOf = (source: string): PodRef => {
  const slash = source.indexOf("/")
  return slash <= 0 || source.indexOf("/", slash + 1) !== -1
    ? { namespace: "", name: source }
    : { namespace: source.slice(0, slash), name: source.slice(slash + 1) }
}

/**
 * How a record's repeated values become an entry's: a text many GPUs share (node, machine, product,
 * versions), a time, a pod. A holder of many entries passes values it keeps once; by default each entry
 * has its own.
 */
export interface RecordValues {
  readonly text: (text: string) => string
  readonly time: (time: string) => Date
  readonly pod: (source: string) => PodRef
}

const ownValues: RecordValues = { text: (text) => text, time: (time) => new Date(time), pod: podOf }

/**
 * What a record says of its GPU, as the inventory's entry would keep it: where the GPU is, the GPU as
 * read, its versions and health. A hub knows its GPUs from the clusters' records alone; `before` is the
 * entry of the GPU's previous record, whose first sighting, UUID and serial it keeps.
 */
export const knownGpuOfRecord = (
  record: GpuRecord,
  before: KnownGpu | undefined,
  values: RecordValues = ownValues,
): KnownGpu => {
  const time = values.time(record.time)
  const uuid = before?.uuid ?? record.uuid
  const serial = record.gpu === "" ? undefined : before?.gpu.serial === record.gpu ? before.gpu.serial : record.gpu
  const read: Gpu = {
    index: record.index,
    uuid,
    ...(serial === undefined ? {} : { serial }),
    ...(record.product === undefined ? {} : { product: values.text(record.product) }),
    ...(record.pciBusId === undefined ? {} : { pciBusId: values.text(record.pciBusId) }),
    ...(record.moduleId === undefined ? {} : { moduleId: record.moduleId }),
    ...(record.migMode === undefined ? {} : { migMode: values.text(record.migMode) }),
    ...(record.chassis === "" ? {} : { platform: { chassisSerial: values.text(record.chassis) } }),
    ...(record.migDevices === undefined ? {} : { migDevices: record.migDevices }),
  }
  // The GPU as its previous record read it, when this one reads the same: most records change nothing of it.
  const gpu = before !== undefined && sameGpu(before.gpu, read) ? before.gpu : read
  return {
    uuid,
    node: values.text(record.node),
    machine: values.text(record.machine),
    ...(record.providerId === undefined ? {} : { providerId: values.text(record.providerId) }),
    pod: values.pod(record.source),
    gpu,
    ...(record.driverVersion === undefined ? {} : { driverVersion: values.text(record.driverVersion) }),
    ...(record.cudaVersion === undefined ? {} : { cudaVersion: values.text(record.cudaVersion) }),
    serialShared: record.serialShared,
    ...(record.health === undefined ? {} : { health: record.health }),
    firstSeen: before?.firstSeen ?? time,
    lastSeen: time,
    lastReported: time,
  }
}
