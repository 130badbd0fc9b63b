import { type Attributes, type BatchObservableCallback, type Observable, ValueType } from "@opentelemetry/api"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { inventoryEventKinds } from "../domain/InventoryEventKind.ts"
import type { ExporterStats } from "../pipeline/Exporter.ts"
import { BoundedLabel } from "./BoundedLabel.ts"
import { GpuHealthMetric, gpuHealthMetricNames } from "./GpuHealthMetric.ts"
import { GpuInfoMetric, gpuInfoMetricName } from "./GpuInfoMetric.ts"
import { ServiceMeter, type ServiceMeterOptions, serviceName } from "./ServiceMeter.ts"
import {
  draMismatchKinds,
  type InventorySnapshot,
  type NodeLabelPatchResult,
  type ReadingOutcome,
  ServiceMetrics,
  type SkippedNodeLabel,
} from "./ServiceMetrics.ts"

/** The instrument names, as Prometheus shows them (units in the name, `_total` on counters). */
export const metricNames = {
  readings: "gpu_serials_readings_total",
  execDuration: "gpu_serials_exec_duration_seconds",
  lastSuccessfulReading: "gpu_serials_last_successful_reading_timestamp_seconds",
  exportRecordsSent: "gpu_serials_export_records_sent_total",
  exportRecordsFailed: "gpu_serials_export_records_failed_total",
  exportRecordsRetried: "gpu_serials_export_records_retried_total",
  exportRecordsDropped: "gpu_serials_export_records_dropped_total",
  exportQueuedRecords: "gpu_serials_export_queued_records",
  exportWriteDuration: "gpu_serials_export_write_duration_seconds",
  workQueueDepth: "gpu_serials_workqueue_depth",
  workQueueRetries: "gpu_serials_workqueue_retries_total",
  workQueueGiveUps: "gpu_serials_workqueue_give_ups_total",
  gpusKnown: "gpu_serials_gpus_known",
  nodesKnown: "gpu_serials_nodes_known",
  nodesFailing: "gpu_serials_nodes_failing",
  gpusKnownByModel: "gpu_serials_gpus_known_by_model",
  inventoryEvents: "gpu_serials_inventory_events_total",
  leader: "gpu_serials_leader",
  leaderChanges: "gpu_serials_leader_changes_total",
  informerRestarts: "gpu_serials_informer_restarts_total",
  draMismatches: "gpu_serials_dra_mismatches_total",
  draSliceOnlyNodes: "gpu_serials_dra_slice_only_nodes",
  hubSourceLag: "gpu_serials_hub_source_lag",
  hubClusterStale: "gpu_serials_hub_cluster_stale",
  hubMessagesRepeated: "gpu_serials_hub_repeated_messages_total",
  hubExportWaitSeconds: "gpu_serials_hub_export_wait_seconds_total",
  nodeLabelPatches: "gpu_serials_node_label_patches_total",
  nodeLabelValuesSkipped: "gpu_serials_node_label_values_skipped_total",
  nodesToLabel: "gpu_serials_node_label_queue_depth",
  gpuInfo: gpuInfoMetricName,
  gpuHealth: gpuHealthMetricNames.health,
  gpuHealthReason: gpuHealthMetricNames.reason,
  gpuRmaEligible: gpuHealthMetricNames.rmaEligible,
  gpusByHealth: gpuHealthMetricNames.byHealth,
} as const

export interface ServiceMetricsOptions {
  /** Whether `gpu_serials_gpu_info` is reported (one series per known GPU); true unless given. */
  readonly gpuInfo?: boolean
}

const nodeLabelPatchResults: ReadonlyArray<NodeLabelPatchResult> = ["ok", "failed", "node-gone", "abandoned"]
const skippedNodeLabels: ReadonlyArray<SkippedNodeLabel> = ["serial", "uuid", "chassis"]

/** nvidia-smi runs from tens of milliseconds to the 30s exec deadline. */
export const execDurationBuckets: ReadonlyArray<number> = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30]

/** From a local stdout write (sub-millisecond) to a remote sink at its write deadline. */
export const exportWriteDurationBuckets: ReadonlyArray<number> = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
]

/** How many distinct values each open-ended label may take before new ones become `other`. */
const labelLimits = { errorKind: 64, exporter: 32, reason: 16, model: 64 } as const

/** The gauges' sources that components register, each read while its component runs. */
interface GaugeSources {
  depth: () => number
  nodesToLabel: () => number
  failingNodes: () => ReadonlyMap<string, number>
  sliceOnlyNodes: () => ReadonlyMap<string, number>
  inventory: () => InventorySnapshot
  hubSourceLag: () => ReadonlyMap<string, number>
  staleClusters: () => ReadonlyMap<string, boolean>
}

/** What the gauges read when no running component has registered a source. */
const idleSources: GaugeSources = {
  depth: () => 0,
  nodesToLabel: () => 0,
  failingNodes: () => new Map(),
  sliceOnlyNodes: () => new Map(),
  inventory: () => ({ gpus: 0, nodes: 0, gpusByModel: {} }),
  hubSourceLag: () => new Map(),
  staleClusters: () => new Map(),
}

interface ObservedState {
  exporters: Map<string, ExporterStats>
  leading: boolean
  lastSuccessfulReadingSeconds: number | undefined
}

const nonNegative = (value: number): number => (Number.isFinite(value) && value > 0 ? value : 0)

/**
 * `ServiceMetrics` on the service's OpenTelemetry meter. Synchronous instruments count what happens;
 * observable ones read the latest exporter stats, the work queue and the inventory at collection time;
 * `gpu_serials_gpu_info` and the GPUs' health are producers read with them (see `GpuInfoMetric` and
 * `GpuHealthMetric`).
 */
export const make = (options: ServiceMetricsOptions = {}): Layer.Layer<ServiceMetrics, never, ServiceMeter> =>
  Layer.effect(
    ServiceMetrics,
    Effect.gen(function* () {
      const serviceMeter = yield* ServiceMeter
      const { meterProvider } = serviceMeter
      const meter = meterProvider.getMeter(serviceName)
      const errorKinds = new BoundedLabel(labelLimits.errorKind)
      const exporterIds = new BoundedLabel(labelLimits.exporter)
      const reasons = new BoundedLabel(labelLimits.reason)
      const models = new BoundedLabel(labelLimits.model)

      const readings = meter.createCounter(metricNames.readings, {
        description: "Node readings (one nvidia-smi run on one node) by result and error kind.",
        valueType: ValueType.INT,
      })
      const execDuration = meter.createHistogram(metricNames.execDuration, {
        description: "Duration of nvidia-smi runs in the device-plugin pods, by result.",
        unit: "s",
        advice: { explicitBucketBoundaries: [...execDurationBuckets] },
      })
      const exportWriteDuration = meter.createHistogram(metricNames.exportWriteDuration, {
        description: "Duration of one exporter write to its sink, by exporter and outcome.",
        unit: "s",
        advice: { explicitBucketBoundaries: [...exportWriteDurationBuckets] },
      })
      const workQueueRetries = meter.createCounter(metricNames.workQueueRetries, {
        description: "Work-queue keys put back for another attempt.",
        valueType: ValueType.INT,
      })
      const hubMessagesRepeated = meter.createCounter(metricNames.hubMessagesRepeated, {
        description:
          "Hub stream messages acknowledged without being reported: clusters' messages the hub had applied, sourced again.",
        valueType: ValueType.INT,
      })
      const hubExportWaitSeconds = meter.createCounter(metricNames.hubExportWaitSeconds, {
        description:
          "Seconds a hub held records back for an exporter whose buffer was full, by exporter; the hub reads no more meanwhile.",
        unit: "s",
      })
      const workQueueGiveUps = meter.createCounter(metricNames.workQueueGiveUps, {
        description: "Work-queue keys dropped after their last attempt, by reason.",
        valueType: ValueType.INT,
      })
      const inventoryEvents = meter.createCounter(metricNames.inventoryEvents, {
        description: "GPU inventory events handed to the exporters, by kind.",
        valueType: ValueType.INT,
      })
      const leaderChanges = meter.createCounter(metricNames.leaderChanges, {
        description: "Times this replica started or stopped leading; a steady rise means leadership flaps.",
        valueType: ValueType.INT,
      })
      const informerRestarts = meter.createCounter(metricNames.informerRestarts, {
        description: "Kubernetes informer restarts after an error, by resource.",
        valueType: ValueType.INT,
      })
      const draMismatches = meter.createCounter(metricNames.draMismatches, {
        description:
          "UUIDs a DRA node's nvidia-smi reading and its ResourceSlices disagree on, once per node and change, by kind (missing-from-slices, missing-from-reading).",
        valueType: ValueType.INT,
      })
      const nodeLabelPatches = meter.createCounter(metricNames.nodeLabelPatches, {
        description: "Patches of node labels, by result (ok, failed, node-gone, abandoned at shutdown).",
        valueType: ValueType.INT,
      })
      const nodeLabelValuesSkipped = meter.createCounter(metricNames.nodeLabelValuesSkipped, {
        description: "Values left out of node labels because they cannot be label values, by label.",
        valueType: ValueType.INT,
      })

      const exportRecordsSent = meter.createObservableCounter(metricNames.exportRecordsSent, {
        description: "Records written to the sink and acknowledged, by exporter.",
        valueType: ValueType.INT,
      })
      const exportRecordsFailed = meter.createObservableCounter(metricNames.exportRecordsFailed, {
        description: "Records in write attempts that failed, by exporter.",
        valueType: ValueType.INT,
      })
      const exportRecordsRetried = meter.createObservableCounter(metricNames.exportRecordsRetried, {
        description: "Records in write attempts that were retried, by exporter.",
        valueType: ValueType.INT,
      })
      const exportRecordsDropped = meter.createObservableCounter(metricNames.exportRecordsDropped, {
        description: "Records given up (buffer full, retries exhausted, rejected), by exporter.",
        valueType: ValueType.INT,
      })
      const exportQueuedRecords = meter.createObservableGauge(metricNames.exportQueuedRecords, {
        description: "Records waiting in the exporter's buffer, by exporter.",
        valueType: ValueType.INT,
      })
      const workQueueDepth = meter.createObservableGauge(metricNames.workQueueDepth, {
        description: "Keys waiting in the work queue.",
        valueType: ValueType.INT,
      })
      const nodesToLabel = meter.createObservableGauge(metricNames.nodesToLabel, {
        description:
          "Node label patches waiting: nodes queued for labelling, and patches waiting for a QPS token behind the readings.",
        valueType: ValueType.INT,
      })
      const gpusKnown = meter.createObservableGauge(metricNames.gpusKnown, {
        description: "GPUs in the known inventory.",
        valueType: ValueType.INT,
      })
      const nodesKnown = meter.createObservableGauge(metricNames.nodesKnown, {
        description: "Nodes with GPUs in the known inventory.",
        valueType: ValueType.INT,
      })
      const nodesFailing = meter.createObservableGauge(metricNames.nodesFailing, {
        description: "Nodes whose last reading failed, by error kind.",
        valueType: ValueType.INT,
      })
      const sliceOnlyNodes = meter.createObservableGauge(metricNames.draSliceOnlyNodes, {
        description:
          "DRA nodes whose GPUs are known from their ResourceSlices alone (no serial), by reason: no-plugin-pod, pod-not-ready, or the failure kind of the reading.",
        valueType: ValueType.INT,
      })
      const hubSourceLag = meter.createObservableGauge(metricNames.hubSourceLag, {
        description: "On a hub: messages of a cluster's stream the hub stream has yet to copy, by cluster.",
        valueType: ValueType.INT,
      })
      const hubClusterStale = meter.createObservableGauge(metricNames.hubClusterStale, {
        description:
          "On a hub: 1 for a cluster not heard of (heartbeat or record) for STALE_AFTER, else 0, by cluster.",
        valueType: ValueType.INT,
      })
      const gpusKnownByModel = meter.createObservableGauge(metricNames.gpusKnownByModel, {
        description: "GPUs in the known inventory by product name.",
        valueType: ValueType.INT,
      })
      const leader = meter.createObservableGauge(metricNames.leader, {
        description: "1 while this replica holds the leader lease, else 0.",
        valueType: ValueType.INT,
      })
      const lastSuccessfulReading = meter.createObservableGauge(metricNames.lastSuccessfulReading, {
        description: "When a node reading last succeeded, in seconds since the Unix epoch.",
        unit: "s",
      })

      const sources: GaugeSources = { ...idleSources }
      const state: ObservedState = {
        exporters: new Map(),
        leading: false,
        lastSuccessfulReadingSeconds: undefined,
      }
      const gpuInfo = new GpuInfoMetric()
      if (options.gpuInfo !== false) yield* serviceMeter.addProducer(gpuInfo)
      // Health is what a fleet owner pages on: it stays when the info metric is turned off.
      const gpuHealth = new GpuHealthMetric()
      yield* serviceMeter.addProducer(gpuHealth)

      /** `source` feeds its gauge until the scope closes; then the gauge reads idle, unless another source replaced it. */
      const registered = <K extends keyof GaugeSources>(
        gauge: K,
        source: GaugeSources[K],
      ): Effect.Effect<void, never, Scope.Scope> =>
        Effect.acquireRelease(
          Effect.sync(() => {
            sources[gauge] = source
          }),
          () =>
            Effect.sync(() => {
              if (sources[gauge] === source) sources[gauge] = idleSources[gauge]
            }),
        )

      // An error kind once seen keeps its series at 0 when no node fails with it, so recoveries show.
      const failingKindsSeen = new Set<string>()
      const sliceOnlyReasonsSeen = new Set<string>()

      const observeAll: BatchObservableCallback = (observer) => {
        for (const [exporter, stats] of state.exporters) {
          const attributes: Attributes = { exporter }
          observer.observe(exportRecordsSent, nonNegative(stats.sent), attributes)
          observer.observe(exportRecordsFailed, nonNegative(stats.failed), attributes)
          observer.observe(exportRecordsRetried, nonNegative(stats.retried), attributes)
          observer.observe(exportRecordsDropped, nonNegative(stats.dropped), attributes)
          observer.observe(exportQueuedRecords, nonNegative(stats.queued), attributes)
        }
        observer.observe(workQueueDepth, nonNegative(sources.depth()))
        observer.observe(nodesToLabel, nonNegative(sources.nodesToLabel()))
        const inventory = sources.inventory()
        observer.observe(gpusKnown, nonNegative(inventory.gpus))
        observer.observe(nodesKnown, nonNegative(inventory.nodes))
        const byModel = new Map<string, number>()
        for (const [model, count] of Object.entries(inventory.gpusByModel)) {
          const label = models.value(model)
          byModel.set(label, (byModel.get(label) ?? 0) + nonNegative(count))
        }
        for (const [model, count] of byModel) observer.observe(gpusKnownByModel, count, { model })
        const failing = new Map<string, number>()
        for (const [kind, count] of sources.failingNodes()) {
          const label = errorKinds.value(kind)
          failing.set(label, (failing.get(label) ?? 0) + nonNegative(count))
        }
        for (const kind of failing.keys()) failingKindsSeen.add(kind)
        for (const kind of failingKindsSeen)
          observer.observe(nodesFailing, failing.get(kind) ?? 0, { error_kind: kind })
        const sliceOnly = new Map<string, number>()
        for (const [reason, count] of sources.sliceOnlyNodes()) {
          const label = errorKinds.value(reason)
          sliceOnly.set(label, (sliceOnly.get(label) ?? 0) + nonNegative(count))
        }
        for (const reason of sliceOnly.keys()) sliceOnlyReasonsSeen.add(reason)
        for (const reason of sliceOnlyReasonsSeen)
          observer.observe(sliceOnlyNodes, sliceOnly.get(reason) ?? 0, { reason })
        for (const [cluster, lag] of sources.hubSourceLag())
          observer.observe(hubSourceLag, nonNegative(lag), { cluster })
        for (const [cluster, stale] of sources.staleClusters())
          observer.observe(hubClusterStale, stale ? 1 : 0, { cluster })
        observer.observe(leader, state.leading ? 1 : 0)
        if (state.lastSuccessfulReadingSeconds !== undefined) {
          observer.observe(lastSuccessfulReading, state.lastSuccessfulReadingSeconds)
        }
      }
      const observables: Array<Observable> = [
        exportRecordsSent,
        exportRecordsFailed,
        exportRecordsRetried,
        exportRecordsDropped,
        exportQueuedRecords,
        workQueueDepth,
        nodesToLabel,
        gpusKnown,
        nodesKnown,
        nodesFailing,
        sliceOnlyNodes,
        hubSourceLag,
        hubClusterStale,
        gpusKnownByModel,
        leader,
        lastSuccessfulReading,
      ]
      meter.addBatchObservableCallback(observeAll, observables)
      yield* Effect.addFinalizer(() => Effect.sync(() => meter.removeBatchObservableCallback(observeAll, observables)))

      // Series whose label values are known up front start at zero, so rates work from the first scrape.
      readings.add(0, { result: "ok" })
      workQueueRetries.add(0)
      for (const kind of inventoryEventKinds) inventoryEvents.add(0, { kind })
      for (const resource of ["pods", "nodes"]) informerRestarts.add(0, { resource })
      for (const leading of ["true", "false"]) leaderChanges.add(0, { leading })
      for (const result of nodeLabelPatchResults) nodeLabelPatches.add(0, { result })
      for (const label of skippedNodeLabels) nodeLabelValuesSkipped.add(0, { label })

      const readingAttributes = (outcome: ReadingOutcome): Attributes =>
        outcome.result === "ok"
          ? { result: outcome.result }
          : { result: outcome.result, error_kind: errorKinds.value(outcome.errorKind) }

      return ServiceMetrics.of({
        readingFinished: (outcome) => Effect.sync(() => readings.add(1, readingAttributes(outcome))),
        execFinished: (durationSeconds, result) =>
          Effect.sync(() => execDuration.record(nonNegative(durationSeconds), { result })),
        readingSucceededAt: (time) =>
          Effect.sync(() => {
            const seconds = time.getTime() / 1000
            if (!Number.isFinite(seconds)) return
            state.lastSuccessfulReadingSeconds = Math.max(state.lastSuccessfulReadingSeconds ?? seconds, seconds)
          }),
        workQueueRetried: Effect.sync(() => workQueueRetries.add(1)),
        workQueueGaveUp: (reason) => Effect.sync(() => workQueueGiveUps.add(1, { reason: reasons.value(reason) })),
        workQueueMayGiveUp: (possible) =>
          Effect.sync(() => {
            for (const reason of possible) workQueueGiveUps.add(0, { reason: reasons.value(reason) })
          }),
        informerRestarted: (resource) => Effect.sync(() => informerRestarts.add(1, { resource })),
        draMismatches: (kind, count) =>
          Effect.sync(() => {
            if (count > 0) draMismatches.add(count, { kind })
          }),
        observeSliceOnlyNodes: (byReason) =>
          Effect.andThen(
            Effect.sync(() => {
              for (const kind of draMismatchKinds) draMismatches.add(0, { kind })
            }),
            registered("sliceOnlyNodes", byReason),
          ),
        inventoryEvents: (kind, count) =>
          Effect.sync(() => {
            if (count > 0) inventoryEvents.add(count, { kind })
          }),
        observeHubSourceLag: (byCluster) =>
          Effect.andThen(
            Effect.sync(() => hubMessagesRepeated.add(0)),
            registered("hubSourceLag", byCluster),
          ),
        hubMessagesRepeated: (count) =>
          Effect.sync(() => {
            if (count > 0) hubMessagesRepeated.add(count)
          }),
        observeStaleClusters: (byCluster) => registered("staleClusters", byCluster),
        leaderChanged: (leading) =>
          Effect.sync(() => {
            if (state.leading !== leading) leaderChanges.add(1, { leading: leading ? "true" : "false" })
            state.leading = leading
          }),
        observeWorkQueueDepth: (depth) => registered("depth", depth),
        nodeLabelPatched: (result) => Effect.sync(() => nodeLabelPatches.add(1, { result })),
        nodeLabelValueSkipped: (label) => Effect.sync(() => nodeLabelValuesSkipped.add(1, { label })),
        observeNodesToLabel: (waiting) => registered("nodesToLabel", waiting),
        observeFailingNodes: (byKind) => registered("failingNodes", byKind),
        observeInventory: (snapshot) => registered("inventory", snapshot),
        observeGpus: (source) =>
          Effect.acquireRelease(
            Effect.sync(() => {
              gpuInfo.observe(source)
              gpuHealth.observe(source)
            }),
            () =>
              Effect.sync(() => {
                gpuInfo.forget(source)
                gpuHealth.forget(source)
              }),
          ),
        hubExportWaited: (exporter, seconds) =>
          Effect.sync(() => {
            if (seconds > 0) hubExportWaitSeconds.add(seconds, { exporter: exporterIds.value(exporter) })
          }),
        exporterStats: (stats) =>
          Effect.sync(() => {
            for (const [exporter, latest] of Object.entries(stats))
              state.exporters.set(exporterIds.value(exporter), latest)
          }),
        exportWritten: (exporter, durationSeconds, ok) =>
          Effect.sync(() =>
            exportWriteDuration.record(nonNegative(durationSeconds), {
              exporter: exporterIds.value(exporter),
              outcome: ok ? "ok" : "error",
            }),
          ),
      })
    }),
  )

/** `ServiceMetrics` with every metric on. */
export const layer: Layer.Layer<ServiceMetrics, never, ServiceMeter> = make()

/** `ServiceMetrics` together with the meter it records on (for `/metrics` and other readers). */
export const layerWithMeter = (
  meterOptions: ServiceMeterOptions,
  options: ServiceMetricsOptions = {},
): Layer.Layer<ServiceMetrics | ServiceMeter> =>
  make(options).pipe(Layer.provideMerge(ServiceMeter.layer(meterOptions)))
