import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import { closingBudget, ShutdownDeadline } from "../../../component/ShutdownDeadline.ts"
import type { CacheChange } from "../../../kubeclient/cache/InformerCache.ts"
import type { ResourceInformer } from "../../../kubeclient/cache/ResourceInformer.ts"
import type { LabelPatch } from "../../../kubeclient/labels/LabelPatch.ts"
import { KubeApi } from "../../../kubeclient/rest/KubeApi.ts"
import type { KubeApiError } from "../../../kubeclient/rest/KubeApiError.ts"
import type { BackoffPolicy } from "../../../kubeclient/workqueue/KeyBackoff.ts"
import * as WorkQueue from "../../../kubeclient/workqueue/WorkQueue.ts"
import { defectMessage } from "../../../log/ShortMessage.ts"
import { ServiceMetrics } from "../../../metrics/ServiceMetrics.ts"
import { InventoryFeed } from "../../../pipeline/InventoryFeed.ts"
import type { ClusterNode } from "../ClusterNode.ts"
import { desiredNodeLabels, labelsUnderPrefix } from "./GpuNodeLabels.ts"
import { NodeGpuMirror } from "./NodeGpuMirror.ts"
import { nodeLabelPatch } from "./NodeLabelPatch.ts"
import { type LastPassEnd, type LastPassFailure, unwrittenNodeLabels } from "./UnwrittenNodeLabels.ts"

export interface NodeLabellerOptions {
  /** Label keys are `<prefix>/gpu-<index>`, ... (LABEL_PREFIX). */
  readonly prefix: string
  /** Nodes patched at the same time. */
  readonly workers: number
  /** Backoff between attempts of one node whose patch failed. */
  readonly retryBackoff: BackoffPolicy
  /** Longest the last pass at close may take; less when the service's shutdown deadline leaves less. */
  readonly shutdownTimeoutMs: number
}

export const defaultNodeLabellerTuning: Omit<NodeLabellerOptions, "prefix"> = {
  workers: 4,
  retryBackoff: { baseMs: 1_000, maxMs: 300_000, jitter: 0.5 },
  shutdownTimeoutMs: 15_000,
}

/** The node labeller of a receiver: it hears the node informer's changes and labels nodes once started. */
export interface NodeLabeller {
  /** Hands a change of the node informer to the labeller (a label removed by hand, a node deleted). */
  readonly nodeChanged: (change: CacheChange<ClusterNode>) => Effect.Effect<void>
  /**
   * Follows the inventory feed and labels nodes until the scope the labeller was made in closes;
   * labelling starts once `nodes` listed. Its patches let the readings go first: those waiting for a QPS
   * token and, for 2 s at most, the `readingsQueued()` pods waiting to be read.
   */
  readonly start: (nodes: ResourceInformer<ClusterNode>, readingsQueued: () => number) => Effect.Effect<void>
}

/**
 * Whether the informer's version of a node is the one a patch produced, or later. Versions are opaque to
 * clients; the API server's are integers, compared as such, and anything else only for equality.
 */
const caughtUp = (informed: string, patched: string): boolean => {
  if (informed === patched || patched === "") return true
  const [a, b] = [Number(informed), Number(patched)]
  return Number.isSafeInteger(a) && Number.isSafeInteger(b) && a > b
}

/** The labels after a merge patch, as the API server applies it. */
const patched = (labels: Readonly<Record<string, string>>, patch: LabelPatch): Readonly<Record<string, string>> => {
  const next: Record<string, string> = { ...labels }
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key]
    else next[key] = value
  }
  return next
}

/**
 * Keeps every node's labels under the prefix equal to what the inventory holds on it (see
 * `GpuNodeLabels`). It mirrors the inventory from the `InventoryFeed` and queues the nodes whose GPUs
 * changed, and the nodes whose labels someone changed; `workers` fibers send each queued node the one
 * merge patch that brings it to its desired labels, computed against the labels the node informer holds
 * (no GET), nothing when they already match. A node the inventory never held GPUs on is left alone. A
 * failed patch is retried with capped backoff under the receiver's QPS bucket and logged once per node
 * and failure kind; a node the API server no longer has is forgotten. It never waits for readings or
 * exports, and its patches yield their QPS tokens to the readings waiting for one (see `KubeApi`).
 *
 * Closing the scope it was made in runs a last pass within the shutdown budget (`shutdownTimeoutMs`, or
 * less as the service's `ShutdownDeadline` leaves): it waits for the feed to end and mirrors its last
 * changes, then patches every queued node once with its workers, nodes waiting out a backoff included,
 * and retries nothing. What it could not write is logged in one line and counted as abandoned patches.
 * A term that ends while the service runs on (leadership lost) makes no last pass: a leader that lost
 * its lease stops before another starts, and the next leader labels every node from its inventory.
 */
export const make = (
  options: NodeLabellerOptions,
): Effect.Effect<NodeLabeller, never, Scope.Scope | KubeApi | InventoryFeed | ServiceMetrics> =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const feed = yield* InventoryFeed
    const metrics = yield* ServiceMetrics
    const deadline = yield* Effect.serviceOption(ShutdownDeadline)
    const { prefix } = options
    const mirror = new NodeGpuMirror()
    /** The workers and the feed's follower, ended by the last pass. */
    const running = yield* FiberSet.make<void>()
    const queue = yield* WorkQueue.make<string>(options.retryBackoff)
    // Label patches waiting: nodes queued, and those whose patch waits for a token behind the readings.
    yield* metrics.observeNodesToLabel(() => queue.depth() + api.labelPatchesWaiting())
    /** What a successful patch left on a node (its labels and the node's resourceVersion), until the informer has caught up. */
    const written = new Map<string, { readonly resourceVersion: string; readonly labels: Record<string, string> }>()
    /** The failure kind last logged for a node whose patches fail. */
    const failing = new Map<string, string>()
    /** The values last reported as left out of a node's labels. */
    const skippedReported = new Map<string, string>()
    /** The node informer, once started. */
    let informer: ResourceInformer<ClusterNode> | undefined
    /** Completes once the feed ended and its last changes were mirrored. */
    const feedEnded = yield* Deferred.make<void>()
    /** Set by the last pass: failures are then its nodes' last attempts, not retried. */
    let lastAttempts: Map<string, LastPassFailure> | undefined

    /** The node's labels: the informer's, or those of the last patch while the informer holds an older version. */
    const currentLabels = (node: ClusterNode): Readonly<Record<string, string>> => {
      const overlay = written.get(node.key)
      if (overlay === undefined) return node.labels ?? {}
      if (caughtUp(node.resourceVersion, overlay.resourceVersion)) {
        written.delete(node.key)
        return node.labels ?? {}
      }
      return overlay.labels
    }

    const differs = (node: ClusterNode): boolean =>
      nodeLabelPatch(prefix, currentLabels(node), desiredNodeLabels(prefix, mirror.gpusOn(node.key)).labels) !==
      undefined

    const nodeChanged = (change: CacheChange<ClusterNode>): Effect.Effect<void> =>
      Effect.suspend(() => {
        const node = change.object
        if (change._tag === "Deleted") {
          written.delete(node.key)
          failing.delete(node.key)
          skippedReported.delete(node.key)
          return queue.forget(node.key)
        }
        return mirror.has(node.key) && differs(node) ? queue.add(node.key) : Effect.void
      })

    const reportSkipped = Effect.fnUntraced(function* (
      node: string,
      skipped: ReturnType<typeof desiredNodeLabels>["skipped"],
    ) {
      const signature = skipped.map((value) => `${value.key}=${value.value}`).join("\n")
      if (signature === (skippedReported.get(node) ?? "")) return
      if (skipped.length === 0) {
        skippedReported.delete(node)
        return
      }
      skippedReported.set(node, signature)
      for (const value of skipped) yield* metrics.nodeLabelValueSkipped(value.label)
      yield* Effect.logWarning("node label values left out: they cannot be Kubernetes label values").pipe(
        Effect.annotateLogs({
          node,
          labels: skipped.map((value) => value.key).join(","),
          values: skipped.map((value) => JSON.stringify(value.value.slice(0, 80))).join(","),
        }),
      )
    })

    const patchFailed = Effect.fnUntraced(function* (node: string, error: KubeApiError) {
      if (error.status === 404) {
        yield* metrics.nodeLabelPatched("node-gone")
        yield* queue.forget(node)
        failing.delete(node)
        return
      }
      yield* metrics.nodeLabelPatched("failed")
      if (lastAttempts !== undefined) {
        lastAttempts.set(node, { kind: error.kind, message: error.message })
        return
      }
      yield* queue.addRateLimited(node)
      if (failing.get(node) === error.kind) return
      failing.set(node, error.kind)
      yield* Effect.logWarning("node labels not written, retrying with backoff").pipe(
        Effect.annotateLogs({
          node,
          kind: error.kind,
          reason: error.message,
          ...(error.status === 403
            ? { hint: "the service account needs patch on nodes (deploy/components/node-labels)" }
            : {}),
        }),
      )
    })

    const label = (nodes: ResourceInformer<ClusterNode>, readingsQueued: () => number) =>
      Effect.fn("NodeLabeller.label")(function* (name: string) {
        const node = nodes.get(name)
        if (node === undefined) {
          yield* queue.forget(name)
          return
        }
        const desired = desiredNodeLabels(prefix, mirror.gpusOn(name))
        yield* reportSkipped(name, desired.skipped)
        const current = currentLabels(node)
        const patch = nodeLabelPatch(prefix, current, desired.labels)
        if (patch === undefined) {
          yield* queue.forget(name)
          return
        }
        const outcome = yield* Effect.result(api.patchNodeLabels(name, patch, readingsQueued))
        if (Result.isFailure(outcome)) return yield* patchFailed(name, outcome.failure)
        yield* metrics.nodeLabelPatched("ok")
        lastAttempts?.delete(name)
        yield* queue.forget(name)
        written.set(name, {
          resourceVersion: outcome.success,
          labels: { ...labelsUnderPrefix(prefix, patched(current, patch)) },
        })
        if (failing.delete(name)) {
          yield* Effect.logInfo("node labels written again").pipe(Effect.annotateLogs({ node: name }))
        }
      })

    const start = (nodes: ResourceInformer<ClusterNode>, readingsQueued: () => number): Effect.Effect<void> =>
      Effect.gen(function* () {
        informer = nodes
        yield* feed.take.pipe(
          Effect.flatMap((changes) => Effect.forEach(mirror.apply(changes), queue.add, { discard: true })),
          Effect.forever,
          Effect.catchIf(Cause.isDone, () => Deferred.succeed(feedEnded, undefined)),
          FiberSet.run(running),
        )
        const labelNode = label(nodes, readingsQueued)
        const labelSafely = (name: string) =>
          labelNode(name).pipe(
            Effect.catchDefect((defect) =>
              Effect.logError("labelling a node failed unexpectedly").pipe(
                Effect.annotateLogs({ node: name, cause: defectMessage(defect) }),
              ),
            ),
          )
        const worker = Effect.gen(function* () {
          yield* nodes.synced
          let running = true
          while (running) running = yield* queue.processNext(labelSafely)
        })
        for (let n = 0; n < options.workers; n++) yield* FiberSet.run(running, worker)
      })

    /** The feed's last changes mirrored, then every queued node patched once; the workers end when none is left. */
    const patchLastChanges = Effect.gen(function* () {
      yield* Deferred.await(feedEnded)
      lastAttempts = new Map()
      yield* queue.drain
      yield* FiberSet.awaitEmpty(running)
    })

    const lastPass = Effect.gen(function* () {
      if (informer === undefined) return
      const budget = yield* closingBudget(deadline, Duration.millis(options.shutdownTimeoutMs), "flushing")
      // A term that ends while the service runs on (leadership lost) stops at once: another replica may
      // lead already, and it labels every node from the inventory it loads.
      const stopping = Option.isNone(deadline) || (yield* deadline.value.begun)
      let end: LastPassEnd = stopping ? "never-listed" : "term-ended"
      if (stopping && informer.isSynced()) {
        const finished = yield* patchLastChanges.pipe(
          // Interruptible inside the deadline, not around it: closing runs uninterruptibly after an interrupt.
          Effect.interruptible,
          Effect.timeoutOption(budget),
        )
        end = Option.isSome(finished) ? "done" : "timed-out"
      }
      let unfinished: number
      if (stopping) {
        yield* queue.drain
        unfinished = yield* queue.unfinished
        yield* FiberSet.clear(running)
      } else {
        unfinished = yield* queue.unfinished
        yield* FiberSet.clear(running)
        yield* queue.shutDown
      }
      const unwritten = unwrittenNodeLabels({
        end,
        unfinished,
        failed: lastAttempts ?? new Map(),
        budget: Duration.format(budget),
      })
      if (unwritten === undefined) return
      for (let n = 0; n < unfinished; n++) yield* metrics.nodeLabelPatched("abandoned")
      yield* Effect.logWarning(
        end === "term-ended" ? "node labels not written: the term ended" : "node labels not written at shutdown",
      ).pipe(
        Effect.annotateLogs({
          nodes: unwritten.nodes,
          reason: unwritten.reason,
          ...(unwritten.kinds === undefined ? {} : { kinds: unwritten.kinds }),
        }),
      )
    })
    yield* Effect.addFinalizer(() => lastPass)

    return { nodeChanged, start }
  })
