import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { InventoryEventKind } from "../domain/InventoryEventKind.ts"
import type { ExporterStats } from "../pipeline/Exporter.ts"
import type { GpuInfoSource } from "./GpuInfoMetric.ts"

/** Outcome of reading one node; `errorKind` is a bounded label (nvidia-smi error kind or exec failure kind). */
export interface ReadingOutcome {
  readonly result: "ok" | "partial" | "failed"
  readonly errorKind?: string
}

/**
 * How one node label patch ended: written, failed (retried later), the node was gone (forgotten), or
 * abandoned: never sent, as the labeller closed when the shutdown budget ran out.
 */
export type NodeLabelPatchResult = "ok" | "failed" | "node-gone" | "abandoned"

/** Which node label a skipped value was meant for. */
export type SkippedNodeLabel = "serial" | "uuid" | "chassis"

/**
 * A UUID in one of a DRA node's two sources and not in the other: in the nvidia-smi reading and not in the
 * node's ResourceSlices, or the reverse.
 */
export type DraMismatchKind = "missing-from-slices" | "missing-from-reading"

export const draMismatchKinds: ReadonlyArray<DraMismatchKind> = ["missing-from-slices", "missing-from-reading"]

/** What the inventory knows now, read by gauges when metrics are collected. */
export interface InventorySnapshot {
  readonly gpus: number
  readonly nodes: number
  /** GPU count by product name (`unknown` when absent); bounded by the number of GPU models. */
  readonly gpusByModel: Readonly<Record<string, number>>
}

/**
 * The service's own metrics (PRODUCT.md §8): one set of instruments for /metrics (Prometheus text) and
 * OTLP. Every label value is bounded — no pod or node names — except those of `gpu_serials_gpu_info`
 * (turned off by a setting) and of the GPUs' health series, one series per GPU by design. Recording
 * never fails and never blocks.
 *
 * A gauge's source is read while the scope that registered it is open: the component that owns it
 * registers it, and when the component stops (a leader's term ends) the gauge reads as idle again
 * instead of repeating the stopped component's last state.
 */
export class ServiceMetrics extends Context.Service<
  ServiceMetrics,
  {
    readonly readingFinished: (outcome: ReadingOutcome) => Effect.Effect<void>
    readonly execFinished: (durationSeconds: number, result: "ok" | "error" | "timeout") => Effect.Effect<void>
    /** A node read succeeded now (the `last successful reading` timestamp gauge). */
    readonly readingSucceededAt: (time: Date) => Effect.Effect<void>
    readonly workQueueRetried: Effect.Effect<void>
    /** A key was dropped after its last attempt; `reason` is a bounded label. */
    readonly workQueueGaveUp: (reason: string) => Effect.Effect<void>
    /** The reasons the work queue may give up for, each given a series at 0 so the first give-up counts in `increase()`. */
    readonly workQueueMayGiveUp: (reasons: ReadonlyArray<string>) => Effect.Effect<void>
    readonly informerRestarted: (resource: "pods" | "nodes" | "resourceslices") => Effect.Effect<void>
    /** UUIDs a DRA node's reading and its slices disagree on, counted once per node and change. */
    readonly draMismatches: (kind: DraMismatchKind, count: number) => Effect.Effect<void>
    /**
     * Registers the source of the gauge of DRA nodes known from their slices alone (no reading possible),
     * by reason (`no-plugin-pod`, `pod-not-ready`, or the kind of the failure that stops the reading).
     */
    readonly observeSliceOnlyNodes: (
      byReason: () => ReadonlyMap<string, number>,
    ) => Effect.Effect<void, never, Scope.Scope>
    readonly inventoryEvents: (kind: InventoryEventKind, count: number) => Effect.Effect<void>
    readonly leaderChanged: (leading: boolean) => Effect.Effect<void>
    /** Registers the source of the work-queue depth gauge (read when metrics are collected). */
    readonly observeWorkQueueDepth: (depth: () => number) => Effect.Effect<void, never, Scope.Scope>
    /** One patch of a node's labels and how it ended. */
    readonly nodeLabelPatched: (result: NodeLabelPatchResult) => Effect.Effect<void>
    /** A value left out of a node's labels because it cannot be a label value. */
    readonly nodeLabelValueSkipped: (label: SkippedNodeLabel) => Effect.Effect<void>
    /** Registers the source of the gauge of label patches waiting (nodes queued, patches waiting for a token). */
    readonly observeNodesToLabel: (waiting: () => number) => Effect.Effect<void, never, Scope.Scope>
    /** Registers the source of the failing-nodes gauge: nodes whose last reading failed, by error kind. */
    readonly observeFailingNodes: (byKind: () => ReadonlyMap<string, number>) => Effect.Effect<void, never, Scope.Scope>
    /** Registers the source of the GPUs/nodes known gauges. */
    readonly observeInventory: (snapshot: () => InventorySnapshot) => Effect.Effect<void, never, Scope.Scope>
    /**
     * Registers the GPUs `gpu_serials_gpu_info` reports, one series each (when the service has it on), and
     * whose health the health metrics report (those whose fields carry health).
     */
    readonly observeGpus: <T extends object>(source: GpuInfoSource<T>) => Effect.Effect<void, never, Scope.Scope>
    /**
     * Registers the source of a hub's gauges, by cluster (a configured JetStream domain, so bounded):
     * `gpu_serials_hub_source_lag` (messages the hub stream has yet to copy from the cluster's stream).
     */
    readonly observeHubSourceLag: (
      byCluster: () => ReadonlyMap<string, number>,
    ) => Effect.Effect<void, never, Scope.Scope>
    /**
     * Messages of the hub stream acknowledged without being reported: copies of clusters' messages the hub
     * had applied, which the server sourced again under new sequences.
     */
    readonly hubMessagesRepeated: (count: number) => Effect.Effect<void>
    /** Registers the source of `gpu_serials_hub_cluster_stale` by cluster: true for a cluster not heard of for `STALE_AFTER`. */
    readonly observeStaleClusters: (
      byCluster: () => ReadonlyMap<string, boolean>,
    ) => Effect.Effect<void, never, Scope.Scope>
    /**
     * Seconds a hub held records back for an exporter whose buffer was full
     * (`gpu_serials_hub_export_wait_seconds_total`, by exporter id).
     */
    readonly hubExportWaited: (exporter: string, seconds: number) => Effect.Effect<void>
    /** Latest exporter counters by exporter id; the service refreshes them periodically. */
    readonly exporterStats: (stats: Readonly<Record<string, ExporterStats>>) => Effect.Effect<void>
    /** One export write: its duration and outcome, by exporter id. */
    readonly exportWritten: (exporter: string, durationSeconds: number, ok: boolean) => Effect.Effect<void>
  }
>()("gpu-serials/metrics/ServiceMetrics") {}
