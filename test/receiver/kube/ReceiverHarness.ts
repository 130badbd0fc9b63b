import { type SimulatedCluster, type SimulatedClusterOptions, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { Cause, Duration, Effect, Exit, Queue, Scope } from "effect"
import type { NodeObservation } from "../../../src/domain/NodeObservation.ts"
import type { LabelPatch } from "../../../src/kubeclient/labels/LabelPatch.ts"
import { KubeApi } from "../../../src/kubeclient/rest/KubeApi.ts"
import { InventoryFeed } from "../../../src/pipeline/InventoryFeed.ts"
import type { KubeExecConfig } from "../../../src/receiver/kube/KubeExecConfig.ts"
import { factory as kubeExecFactory } from "../../../src/receiver/kube/KubeExecFactory.ts"
import * as KubeExecReceiver from "../../../src/receiver/kube/KubeExecReceiver.ts"
import * as InventoryFeedQueue from "../../../src/service/InventoryFeedQueue.ts"
import { capturedLog } from "../../log/CapturedLog.ts"
import { accessOfKubeconfigFile } from "../../support/KubeconfigAccess.ts"
import { type RecordedMetrics, recordingMetrics } from "../../support/RecordingMetrics.ts"

/** One exec the receiver opened, as it asked for it. */
export interface RecordedExec {
  readonly pod: string
  readonly container: string
  readonly argv: ReadonlyArray<string>
}

/** An observation of one node: a reading, a failed attempt, or the news that it is gone. */
export type NodeEvent = Exclude<NodeObservation, { readonly _tag: "ClusterListed" }>
export type ClusterListing = Extract<NodeObservation, { readonly _tag: "ClusterListed" }>

export interface Harness {
  readonly cluster: SimulatedCluster
  /** The API client the receiver uses, for a test to look at or change the cluster as a user would. */
  readonly api: KubeApi["Service"]
  readonly receiver: KubeExecReceiver.KubeExecReceiver
  /** Every observation of a node taken from `receiver.observations` so far, in order. */
  readonly observations: Array<NodeEvent>
  /** The lists of the cluster taken from `receiver.observations`: one per start. */
  readonly listings: Array<ClusterListing>
  /** Set once `observations` ended with `Done`. */
  readonly ended: { value: boolean }
  readonly execs: Array<RecordedExec>
  /** Every node label patch the receiver sent, in order. */
  readonly labelPatches: Array<{ readonly node: string; readonly labels: LabelPatch }>
  /** Every exec opened (by pod) and label patch answered (by node), in the order they got through. */
  readonly callsThrough: Array<{ readonly call: "exec" | "patch"; readonly name: string }>
  readonly metrics: RecordedMetrics
  /** The receiver's log lines, parsed. */
  readonly logEvents: () => Array<Record<string, unknown>>
  /** Closes the receiver's scope (a graceful shutdown); the cluster stays up until the test ends. */
  readonly stop: Effect.Effect<void>
}

export interface HarnessOptions {
  readonly cluster?: SimulatedClusterOptions
  readonly config?: Partial<KubeExecConfig>
  readonly tuning?: Partial<KubeExecReceiver.KubeExecTuning>
  /** The consumer pauses this long after each observation it takes. */
  readonly consumeDelay?: Duration.Input
  /** Runs on the cluster before the receiver starts (faults to meet at its first calls). */
  readonly before?: (cluster: SimulatedCluster) => void | Promise<void> | Promise<void>
  /** The inventory feed the receiver's node labeller follows; an empty one unless given. */
  readonly feed?: InventoryFeed["Service"]
  /** Sees every observation as it is taken (an inventory processor). */
  readonly onObservation?: (observation: NodeObservation) => Effect.Effect<void>
  /** The receiver's API client's QPS and burst; 200 each unless given. */
  readonly qps?: number
  readonly burst?: number
}

/** Quick settings for a simulated cluster: near-instant pods and nvidia-smi, frequent bookmarks. */
export const quickCluster: SimulatedClusterOptions = {
  nodes: 4,
  modelMix: { "h100-hgx": 1, "gb200-nvl72": 1, t4: 1, l40s: 1 },
  execLatency: 5,
  podTimings: { startMs: 20, readyMs: 20, terminationMs: 20 },
  bookmarkIntervalMs: 200,
}

const quickTuning: KubeExecReceiver.KubeExecTuning = {
  ...KubeExecReceiver.defaultTuning,
  maxAttempts: 4,
  retryBackoff: { baseMs: 50, maxMs: 400, jitter: 0.5 },
  informer: {
    pageSize: 3,
    stallTimeoutMs: 1_000,
    restartBackoff: { baseMs: 50, maxMs: 400, jitter: 0.5 },
    watchSeconds: { min: 300, max: 600 },
  },
  shutdownGraceMs: 500,
}

/**
 * Starts a simulated cluster on 127.0.0.1 and the receiver against it through the real client-node,
 * collecting observations, exec requests and metrics. Both stop when the test's scope closes.
 */
export const startHarness = (options: HarnessOptions = {}): Effect.Effect<Harness, never, Scope.Scope> =>
  Effect.gen(function* () {
    const cluster = yield* Effect.acquireRelease(
      Effect.promise(() => startSimulatedCluster({ ...quickCluster, ...options.cluster })),
      (started) => Effect.promise(() => started.close()),
    )
    yield* Effect.promise(async () => options.before?.(cluster))
    const api = yield* KubeApi.make(accessOfKubeconfigFile(cluster.kubeconfigPath), {
      qps: options.qps ?? 200,
      burst: options.burst ?? 200,
      requestTimeoutMs: 3_000,
      execHandshakeTimeoutMs: 3_000,
    })
    const execs: Array<RecordedExec> = []
    const labelPatches: Array<{ readonly node: string; readonly labels: LabelPatch }> = []
    const callsThrough: Array<{ readonly call: "exec" | "patch"; readonly name: string }> = []
    const recordingApi = KubeApi.of({
      ...api,
      patchNodeLabels: (node, labels, readingsQueued) =>
        Effect.suspend(() => {
          labelPatches.push({ node, labels })
          return api.patchNodeLabels(node, labels, readingsQueued)
        }).pipe(Effect.tap(() => Effect.sync(() => callsThrough.push({ call: "patch", name: node })))),
      exec: (call, deadlineMillis) =>
        Effect.suspend(() => {
          execs.push({ pod: call.pod, container: call.container, argv: [...call.argv] })
          return api.exec(call, deadlineMillis)
        }).pipe(Effect.tap(() => Effect.sync(() => callsThrough.push({ call: "exec", name: call.pod })))),
      openExec: (call, deadlineMillis) =>
        Effect.suspend(() => {
          execs.push({ pod: call.pod, container: call.container, argv: [...call.argv] })
          return api.openExec(call, deadlineMillis)
        }).pipe(Effect.tap(() => Effect.sync(() => callsThrough.push({ call: "exec", name: call.pod })))),
    })
    const { recorded, layer } = recordingMetrics()
    const log = capturedLog()
    const config: KubeExecConfig = {
      ...kubeExecFactory.defaultConfig,
      namespace: cluster.namespace,
      labelSelector: cluster.labelSelector,
      container: cluster.container,
      workers: 4,
      timeoutMs: 2_000,
      ...options.config,
    }
    const receiverScope = yield* Scope.make()
    const stop = Scope.close(receiverScope, Exit.void)
    const feed = options.feed ?? (yield* InventoryFeedQueue.make)
    const receiver = yield* KubeExecReceiver.make(config, { ...quickTuning, ...options.tuning }).pipe(
      Effect.provideService(KubeApi, recordingApi),
      Effect.provideService(InventoryFeed, feed),
      Effect.provide(layer),
      Effect.provide(log.layer),
      Scope.provide(receiverScope),
    )
    const observations: Array<NodeEvent> = []
    const listings: Array<ClusterListing> = []
    const ended = { value: false }
    yield* Queue.take(receiver.observations).pipe(
      Effect.tap((observation) =>
        Effect.sync(() =>
          observation._tag === "ClusterListed" ? listings.push(observation) : observations.push(observation),
        ),
      ),
      Effect.tap((observation) =>
        options.onObservation === undefined ? Effect.void : options.onObservation(observation),
      ),
      Effect.tap(() => (options.consumeDelay === undefined ? Effect.void : Effect.sleep(options.consumeDelay))),
      Effect.forever,
      // The observations have all been taken: the inventory publishes nothing more.
      Effect.catchIf(Cause.isDone, () =>
        Effect.andThen(
          Effect.sync(() => (ended.value = true)),
          feed.end,
        ),
      ),
      Effect.forkScoped,
    )
    // Added after the consumer, so the receiver closes first while the consumer still takes observations.
    yield* Effect.addFinalizer(() => stop)
    return {
      cluster,
      api,
      receiver,
      observations,
      listings,
      ended,
      execs,
      labelPatches,
      callsThrough,
      metrics: recorded,
      logEvents: log.events,
      stop,
    }
  })

/** Polls `condition` on the real clock until it holds; fails with `what` after `timeout`. */
export const eventually = (what: string, condition: () => boolean, timeout: Duration.Input = "10 seconds") =>
  Effect.gen(function* () {
    const deadline = Date.now() + Duration.toMillis(Duration.fromInputUnsafe(timeout))
    while (!condition()) {
      if (Date.now() > deadline) {
        return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      }
      yield* Effect.sleep("20 millis")
    }
  })

export const reads = (harness: Harness) =>
  harness.observations.filter(
    (observation): observation is Extract<NodeObservation, { _tag: "NodeRead" }> => observation._tag === "NodeRead",
  )

export const failures = (harness: Harness) =>
  harness.observations.filter(
    (observation): observation is Extract<NodeObservation, { _tag: "NodeReadFailed" }> =>
      observation._tag === "NodeReadFailed",
  )

export const gone = (harness: Harness) =>
  harness.observations.filter(
    (observation): observation is Extract<NodeObservation, { _tag: "NodeGone" }> => observation._tag === "NodeGone",
  )

/** No exec ever went through a shell: nvidia-smi is argv[0] and its arguments follow as they are. */
export const execsRanNvidiaSmiDirectly = (harness: Harness): boolean =>
  harness.execs.every(
    (exec) =>
      exec.argv[0] === "nvidia-smi" &&
      !exec.argv.some((arg) => arg === "-c" || (arg.includes("sh") && arg.startsWith("/"))),
  )
