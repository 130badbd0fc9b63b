import type { Gpu } from "./Gpu.ts"
import type { GpuHealth, HealthState } from "./GpuHealth.ts"
import { gpuRecord, type PreviousLocation } from "./GpuRecordBuilder.ts"
import type { InventoryEvent } from "./InventoryEvent.ts"
import type { InventoryEventKind } from "./InventoryEventKind.ts"
import type { PodRef } from "./NodeObservation.ts"
import type { NodeReading } from "./NodeReading.ts"

/**
 * What the inventory remembers of one GPU, keyed by its UUID: where it is now (node, machine, the
 * device-plugin pod that last read it), the facts of its last record, and when it was first seen, last
 * seen in a reading and last reported. The unit a durable inventory store keeps, one per UUID.
 */
export interface KnownGpu {
  readonly uuid: string
  /** Name of the node the GPU is on. */
  readonly node: string
  readonly nodeUid?: string
  /** The node's `spec.providerID`, as the last reading of the GPU found it. */
  readonly providerId?: string
  /** Machine id derived from `providerId` (`na` without one): with `node`, the GPU's location. */
  readonly machine: string
  /** The device-plugin pod that last read the GPU (the record's `source`). */
  readonly pod: PodRef
  /** The GPU as last read, without the signals of its condition (`health` holds them); its chassis is `gpu.platform.chassisSerial`. */
  readonly gpu: Gpu
  readonly driverVersion?: string
  readonly cudaVersion?: string
  /** Whether another GPU of the last reading reported the same serial. */
  readonly serialShared: boolean
  /** The verdict on the GPU's last reported condition; absent when no reading said anything of it. */
  readonly health?: GpuHealth
  readonly firstSeen: Date
  /** Time of the last reading that reported the GPU. */
  readonly lastSeen: Date
  /** Time of the last event exported for the GPU. */
  readonly lastReported: Date
}

/**
 * The known GPU re-affirmed at `time`. One literal of every field, as the inventory builds its entries: a
 * spread copy would spill the fields past V8's first guess into a second array, 16 bytes more a GPU.
 */
export const reportedAt = (known: KnownGpu, time: Date): KnownGpu => ({
  gpu: known.gpu,
  ...(known.driverVersion === undefined ? {} : { driverVersion: known.driverVersion }),
  ...(known.cudaVersion === undefined ? {} : { cudaVersion: known.cudaVersion }),
  ...(known.providerId === undefined ? {} : { providerId: known.providerId }),
  serialShared: known.serialShared,
  uuid: known.uuid,
  node: known.node,
  ...(known.nodeUid === undefined ? {} : { nodeUid: known.nodeUid }),
  machine: known.machine,
  pod: known.pod,
  ...(known.health === undefined ? {} : { health: known.health }),
  firstSeen: known.firstSeen,
  lastSeen: known.lastSeen,
  lastReported: time,
})

/** The chassis (NVL72 tray) serial of a known GPU; empty when it has none. */
export const chassisOf = (known: KnownGpu): string => known.gpu.platform?.chassisSerial ?? ""

/** The record facts a reading gives one GPU: everything its next record says besides where and when. */
export interface GpuFacts {
  readonly gpu: Gpu
  readonly driverVersion?: string
  readonly cudaVersion?: string
  readonly providerId?: string
  readonly serialShared: boolean
}

const samePlatform = (a: Gpu["platform"], b: Gpu["platform"]): boolean =>
  a === b ||
  (a !== undefined &&
    b !== undefined &&
    a.chassisSerial === b.chassisSerial &&
    a.slotNumber === b.slotNumber &&
    a.trayIndex === b.trayIndex &&
    a.hostId === b.hostId &&
    a.peerType === b.peerType &&
    a.fabricGuid === b.fabricGuid)

const sameMigDevices = (a: Gpu["migDevices"], b: Gpu["migDevices"]): boolean => {
  const left = a ?? []
  const right = b ?? []
  return (
    left.length === right.length &&
    left.every((mig, index) => mig.uuid === right[index]?.uuid && mig.profile === right[index]?.profile)
  )
}

/** Whether two readings of a GPU say the same of it (its health signals aside). */
export const sameGpu = (a: Gpu, b: Gpu): boolean =>
  a.index === b.index &&
  a.uuid === b.uuid &&
  a.serial === b.serial &&
  a.product === b.product &&
  a.pciBusId === b.pciBusId &&
  a.moduleId === b.moduleId &&
  a.migMode === b.migMode &&
  sameMigDevices(a.migDevices, b.migDevices) &&
  samePlatform(a.platform, b.platform)

/**
 * Whether a reading gives a known GPU the same record facts. The pod is not a fact: a restarted
 * device-plugin pod reads the same GPU under a new name, and that alone is no news.
 */
export const sameFacts = (known: KnownGpu, facts: GpuFacts): boolean =>
  sameGpu(known.gpu, facts.gpu) &&
  known.driverVersion === facts.driverVersion &&
  known.cudaVersion === facts.cudaVersion &&
  known.providerId === facts.providerId &&
  known.serialShared === facts.serialShared

/** The node-level versions of a known GPU, in the shape the record builder takes. */
const versionsOf = (known: KnownGpu): Pick<NodeReading, "driverVersion" | "cudaVersion"> => ({
  ...(known.driverVersion === undefined ? {} : { driverVersion: known.driverVersion }),
  ...(known.cudaVersion === undefined ? {} : { cudaVersion: known.cudaVersion }),
})

/**
 * One event about a known GPU: its record built from the GPU's facts and location at `time`, and
 * the node and pod it came from as the origin.
 */
export const knownGpuEvent = (options: {
  readonly known: KnownGpu
  readonly event: InventoryEventKind
  readonly cluster: string
  readonly time: Date
  readonly previous?: PreviousLocation
  /** For `health` events: the state before the change. */
  readonly previousHealthState?: HealthState
  /** How often the inventory re-affirms an unchanged GPU, 0 for never. */
  readonly reportIntervalMs: number
}): InventoryEvent => {
  const { known } = options
  const record = gpuRecord({
    gpu: known.gpu,
    reading: versionsOf(known),
    context: {
      cluster: options.cluster,
      node: known.node,
      ...(known.providerId === undefined ? {} : { providerId: known.providerId }),
      source: `${known.pod.namespace}/${known.pod.name}`,
      time: options.time,
    },
    event: options.event,
    serialShared: known.serialShared,
    ...(options.previous === undefined ? {} : { previous: options.previous }),
    ...(known.health === undefined ? {} : { health: known.health }),
    ...(options.previousHealthState === undefined ? {} : { previousHealthState: options.previousHealthState }),
  })
  return {
    record,
    reportIntervalMs: options.reportIntervalMs,
    origin: {
      ...(known.nodeUid === undefined ? {} : { nodeUid: known.nodeUid }),
      podNamespace: known.pod.namespace,
      podName: known.pod.name,
    },
  }
}
