import { Effect, Layer } from "effect"
import type {
  InventorySnapshot,
  NodeLabelPatchResult,
  ReadingOutcome,
  SkippedNodeLabel,
} from "../../src/metrics/ServiceMetrics.ts"
import { ServiceMetrics } from "../../src/metrics/ServiceMetrics.ts"

/** What components recorded, for tests that check a component reports what it did. */
export interface RecordedMetrics {
  readonly readings: Array<ReadingOutcome>
  readonly execs: Array<{ readonly durationSeconds: number; readonly result: string }>
  readonly workQueueRetries: { count: number }
  readonly hubMessagesRepeated: { count: number }
  /** Seconds a hub waited for each exporter with a full buffer, by exporter id. */
  readonly hubExportWaits: Record<string, number>
  readonly workQueueGiveUps: Array<string>
  readonly informerRestarts: Array<string>
  readonly events: Record<string, number>
  readonly leading: Array<boolean>
  readonly exportWrites: Array<{ readonly exporter: string; readonly ok: boolean }>
  readonly nodeLabelPatches: Array<NodeLabelPatchResult>
  readonly nodeLabelValuesSkipped: Array<SkippedNodeLabel>
  readonly draMismatches: Record<string, number>
  sliceOnlyNodes: () => ReadonlyMap<string, number>
  hubSourceLag: () => ReadonlyMap<string, number>
  staleClusters: () => ReadonlyMap<string, boolean>
  nodesToLabel: () => number
  workQueueDepth: () => number
  failingNodes: () => ReadonlyMap<string, number>
  inventory: () => InventorySnapshot
}

export const recordingMetrics = (): {
  readonly recorded: RecordedMetrics
  readonly layer: Layer.Layer<ServiceMetrics>
} => {
  const recorded: RecordedMetrics = {
    readings: [],
    execs: [],
    workQueueRetries: { count: 0 },
    hubMessagesRepeated: { count: 0 },
    hubExportWaits: {},
    workQueueGiveUps: [],
    informerRestarts: [],
    events: {},
    leading: [],
    exportWrites: [],
    nodeLabelPatches: [],
    nodeLabelValuesSkipped: [],
    draMismatches: {},
    sliceOnlyNodes: () => new Map(),
    hubSourceLag: () => new Map(),
    staleClusters: () => new Map(),
    nodesToLabel: () => 0,
    workQueueDepth: () => 0,
    failingNodes: () => new Map(),
    inventory: () => ({ gpus: 0, nodes: 0, gpusByModel: {} }),
  }
  const record = (action: () => void) => Effect.sync(action)
  const layer = Layer.succeed(
    ServiceMetrics,
    ServiceMetrics.of({
      readingFinished: (outcome) => record(() => recorded.readings.push(outcome)),
      execFinished: (durationSeconds, result) => record(() => recorded.execs.push({ durationSeconds, result })),
      readingSucceededAt: () => Effect.void,
      workQueueRetried: record(() => {
        recorded.workQueueRetries.count++
      }),
      workQueueGaveUp: (reason) => record(() => recorded.workQueueGiveUps.push(reason)),
      workQueueMayGiveUp: () => Effect.void,
      informerRestarted: (resource) => record(() => recorded.informerRestarts.push(resource)),
      draMismatches: (kind, count) =>
        record(() => {
          recorded.draMismatches[kind] = (recorded.draMismatches[kind] ?? 0) + count
        }),
      observeSliceOnlyNodes: (byReason) =>
        record(() => {
          recorded.sliceOnlyNodes = byReason
        }),
      observeHubSourceLag: (byCluster) =>
        record(() => {
          recorded.hubSourceLag = byCluster
        }),
      hubMessagesRepeated: (count) =>
        record(() => {
          recorded.hubMessagesRepeated.count += count
        }),
      hubExportWaited: (exporter, seconds) =>
        record(() => {
          recorded.hubExportWaits[exporter] = (recorded.hubExportWaits[exporter] ?? 0) + seconds
        }),
      observeStaleClusters: (byCluster) =>
        record(() => {
          recorded.staleClusters = byCluster
        }),
      inventoryEvents: (kind, count) =>
        record(() => {
          recorded.events[kind] = (recorded.events[kind] ?? 0) + count
        }),
      leaderChanged: (leading) => record(() => recorded.leading.push(leading)),
      observeWorkQueueDepth: (depth) =>
        record(() => {
          recorded.workQueueDepth = depth
        }),
      nodeLabelPatched: (result) => record(() => recorded.nodeLabelPatches.push(result)),
      nodeLabelValueSkipped: (label) => record(() => recorded.nodeLabelValuesSkipped.push(label)),
      observeNodesToLabel: (waiting) =>
        record(() => {
          recorded.nodesToLabel = waiting
        }),
      observeFailingNodes: (byKind) =>
        record(() => {
          recorded.failingNodes = byKind
        }),
      observeInventory: (snapshot) =>
        record(() => {
          recorded.inventory = snapshot
        }),
      observeGpus: () => Effect.void,
      exporterStats: () => Effect.void,
      exportWritten: (exporter, _durationSeconds, ok) => record(() => recorded.exportWrites.push({ exporter, ok })),
    }),
  )
  return { recorded, layer }
}
