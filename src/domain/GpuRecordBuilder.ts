import type { Gpu } from "./Gpu.ts"
import type { GpuHealth, HealthState } from "./GpuHealth.ts"
import { type GpuRecord, recordSchema } from "./GpuRecord.ts"
import { defaultHealthThresholds, type HealthThresholds, readingHealth } from "./HealthVerdict.ts"
import type { InventoryEventKind } from "./InventoryEventKind.ts"
import type { NodeReading } from "./NodeReading.ts"
import { machineIdentity } from "./ProviderId.ts"
import { recordId } from "./RecordId.ts"

/** Where and when a reading was taken. */
export interface ReadingContext {
  readonly cluster: string
  readonly node: string
  readonly providerId?: string
  /** `<namespace>/<pod>` of the device-plugin pod, or the file a capture was read from. */
  readonly source: string
  readonly time: Date
}

export interface PreviousLocation {
  readonly node: string
  readonly machine: string
}

/** Serials reported by more than one GPU of the reading (GB200 modules, K80 boards). */
export const sharedSerials = (gpus: ReadonlyArray<Gpu>): ReadonlySet<string> => {
  const seen = new Set<string>()
  const shared = new Set<string>()
  for (const gpu of gpus) {
    if (gpu.serial === undefined) continue
    if (seen.has(gpu.serial)) shared.add(gpu.serial)
    seen.add(gpu.serial)
  }
  return shared
}

export const gpuRecord = (options: {
  readonly gpu: Gpu
  readonly reading: Pick<NodeReading, "driverVersion" | "cudaVersion">
  readonly context: ReadingContext
  readonly event: InventoryEventKind
  readonly serialShared: boolean
  readonly previous?: PreviousLocation
  /** The verdict on the GPU's condition; absent when the reading said nothing of it. */
  readonly health?: GpuHealth
  /** For `health` events: the state before the change. */
  readonly previousHealthState?: HealthState
}): GpuRecord => {
  const { gpu, reading, context, event, previous, health } = options
  const machine = machineIdentity(context.providerId).machine
  const time = context.time.toISOString()
  const providerId = context.providerId?.trim()
  return {
    schema: recordSchema,
    event,
    id: recordId({ cluster: context.cluster, uuid: gpu.uuid, event, node: context.node, machine, time }),
    cluster: context.cluster,
    node: context.node,
    machine,
    source: context.source,
    chassis: gpu.platform?.chassisSerial ?? "",
    gpu: gpu.serial ?? "",
    time,
    uuid: gpu.uuid,
    index: gpu.index,
    ...(gpu.product === undefined ? {} : { product: gpu.product }),
    ...(gpu.pciBusId === undefined ? {} : { pciBusId: gpu.pciBusId }),
    ...(gpu.moduleId === undefined ? {} : { moduleId: gpu.moduleId }),
    ...(gpu.migMode === undefined ? {} : { migMode: gpu.migMode }),
    ...(gpu.migDevices === undefined || gpu.migDevices.length === 0 ? {} : { migDevices: gpu.migDevices }),
    ...(reading.driverVersion === undefined ? {} : { driverVersion: reading.driverVersion }),
    ...(reading.cudaVersion === undefined ? {} : { cudaVersion: reading.cudaVersion }),
    ...(providerId === undefined || providerId === "" ? {} : { providerId }),
    serialShared: options.serialShared,
    ...(previous === undefined ? {} : { previousNode: previous.node, previousMachine: previous.machine }),
    ...(health === undefined ? {} : { health }),
    ...(options.previousHealthState === undefined ? {} : { previousHealthState: options.previousHealthState }),
  }
}

/**
 * One record per GPU of a reading, all with the same event (what `parse` prints: `observed`), each with
 * the verdict on its condition under `thresholds` (the published limits unless given).
 */
export const readingRecords = (
  reading: NodeReading,
  context: ReadingContext,
  event: InventoryEventKind,
  thresholds: HealthThresholds = defaultHealthThresholds,
): ReadonlyArray<GpuRecord> => {
  const shared = sharedSerials(reading.gpus)
  const verdicts = readingHealth(reading.gpus, thresholds)
  return reading.gpus.map((gpu) => {
    const health = verdicts.get(gpu.uuid)
    return gpuRecord({
      gpu,
      reading,
      context,
      event,
      serialShared: gpu.serial !== undefined && shared.has(gpu.serial),
      ...(health === undefined ? {} : { health }),
    })
  })
}
