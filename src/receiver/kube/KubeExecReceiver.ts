import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type { Health } from "../../component/Component.ts"
import { closingBudget, ShutdownDeadline } from "../../component/ShutdownDeadline.ts"
import type { NodeObservation } from "../../domain/NodeObservation.ts"
import { defaultInformerOptions, type InformerOptions } from "../../kubeclient/cache/ResourceInformer.ts"
import type { ResourceSliceVersion } from "../../kubeclient/resource/ResourceSlice.ts"
import { KubeApi } from "../../kubeclient/rest/KubeApi.ts"
import type { BackoffPolicy } from "../../kubeclient/workqueue/KeyBackoff.ts"
import * as WorkQueue from "../../kubeclient/workqueue/WorkQueue.ts"
import { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import type { InventoryFeed } from "../../pipeline/InventoryFeed.ts"
import { decideFromFacts, discoveryFacts } from "./dra/DiscoveryDecision.ts"
import * as DraNodes from "./dra/DraNodes.ts"
import * as DraSlices from "./dra/DraSlices.ts"
import { defaultFailingNodesOptions, FailingNodes, type FailingNodesOptions } from "./FailingNodes.ts"
import * as FailureReporting from "./FailureReporting.ts"
import { configForMode, type KubeExecConfig } from "./KubeExecConfig.ts"
import * as NodeReading from "./NodeReading.ts"
import * as NvidiaSmiReader from "./NvidiaSmiReader.ts"
import * as NodeLabeller from "./nodelabels/NodeLabeller.ts"
import * as ObservationOutlet from "./ObservationOutlet.ts"
import * as PodIntake from "./PodIntake.ts"
import { transientKinds } from "./ReadFailure.ts"

/** The running `kube_exec` receiver. */
export interface KubeExecReceiver {
  /**
   * What the receiver observed, in order, for the inventory processor. Bounded: when the consumer falls
   * behind, producers wait (a worker until its pod's deadline, after which the pod is read again later;
   * the informers as long as it takes), so nothing is dropped. Taking fails with `Done` once the receiver
   * has stopped.
   */
  readonly observations: Queue.Dequeue<NodeObservation, Cause.Done>
  /** Completes once pods and nodes have both been listed once (for /readyz). */
  readonly ready: Effect.Effect<void>
  readonly isReady: Effect.Effect<boolean>
  /** Unhealthy before the first lists and while listing or watching fails. */
  readonly health: Effect.Effect<Health>
  /**
   * Whether readings work (see `ReadingsVerdict`): unhealthy when no pod matches the selection, or once
   * every ready pod's node was read, when no reading ever succeeded or every node fails with the same
   * configuration kind; healthy again after a success.
   */
  readonly readings: Effect.Effect<Health>
}

/** Internals of the receiver that the config does not expose; the defaults suit production. */
export interface KubeExecTuning {
  /** Attempts per pod for transient failures (the first included) before it is given up until its next update or resync. */
  readonly maxAttempts: number
  /** Backoff between attempts of one pod. */
  readonly retryBackoff: BackoffPolicy
  readonly informer: InformerOptions
  /** Observations held for the consumer before producers wait. */
  readonly observationBuffer: number
  /** How long closing waits for interrupted reads to close their exec sessions. */
  readonly shutdownGraceMs: number
  /** How often a node logs the same failure kind, and how many failing nodes are remembered. */
  readonly failingNodes: FailingNodesOptions
  /** Fibers and retry backoff of the node labeller (when node labels are enabled). */
  readonly nodeLabeller: Omit<NodeLabeller.NodeLabellerOptions, "prefix">
}

export const defaultTuning: KubeExecTuning = {
  maxAttempts: 5,
  retryBackoff: { baseMs: 1_000, maxMs: 60_000, jitter: 0.5 },
  informer: defaultInformerOptions,
  observationBuffer: 1_024,
  shutdownGraceMs: 2_000,
  failingNodes: defaultFailingNodesOptions,
  nodeLabeller: NodeLabeller.defaultNodeLabellerTuning,
}

/**
 * Starts the receiver: informers on the device-plugin pods and on nodes feed pod keys into a rate-limited
 * work queue (`PodIntake`); `workers` fibers read nvidia-smi in each ready pod within `timeoutMs` and hand
 * the result over as an observation (`NodeReading`), failures going to `FailureReporting`. With node
 * labels enabled, a node labeller (see `NodeLabeller`) keeps each node's labels equal to the GPUs the
 * inventory feed says it has, on the same API client. Closing the scope stops intake and interrupts the
 * reads in flight (their readings are abandoned: not retried, not counted, not handed over), then closes
 * the watches and ends `observations`; the labeller closes last, writing the inventory's last changes
 * once the feed has ended (see `NodeLabeller`).
 */
export const make = (
  configured: KubeExecConfig,
  tuning: KubeExecTuning = defaultTuning,
): Effect.Effect<KubeExecReceiver, never, Scope.Scope | KubeApi | ServiceMetrics | InventoryFeed> =>
  Effect.gen(function* () {
    const metrics = yield* ServiceMetrics
    const api = yield* KubeApi
    const { config, sliceVersion } = yield* discovered(api, configured)
    // Made first, so it closes last: after the outlet ended, once the inventory took what it still held.
    const labeller = config.nodeLabels.enabled
      ? yield* NodeLabeller.make({ prefix: config.nodeLabels.prefix, ...tuning.nodeLabeller })
      : undefined
    const outlet = yield* ObservationOutlet.make(tuning.observationBuffer)
    const queue = yield* WorkQueue.make<string>(tuning.retryBackoff)
    // With DRA: the slices' informer starts first, so the first list of the cluster holds their nodes.
    let draNodes: DraNodes.DraNodes | undefined
    const slices =
      sliceVersion === undefined
        ? undefined
        : yield* DraSlices.start(api, sliceVersion, tuning.informer, (node, devices) =>
            Effect.suspend(() => draNodes?.identityChanged(node, devices) ?? Effect.void),
          )
    const reader = NvidiaSmiReader.make({
      mode: config.nvidiaSmi.mode,
      maxOutputBytes: config.nvidiaSmi.maxOutputBytes,
      container: config.container,
      binary: { path: config.nvidiaSmi.path, mlLibrary: config.nvidiaSmi.mlLibrary },
    })
    const now = Clock.currentTimeMillis.pipe(Effect.map((millis) => new Date(millis)))
    const failing = new FailingNodes(tuning.failingNodes)
    yield* metrics.observeFailingNodes(() => failing.failingByKind())
    yield* metrics.workQueueMayGiveUp([...transientKinds])

    const intake: PodIntake.PodIntake = yield* PodIntake.start({
      config,
      informer: tuning.informer,
      queue,
      outlet,
      reader,
      forgetFailures: (node) => failing.forget(node),
      labeller,
      now,
      slices:
        slices === undefined
          ? undefined
          : {
              synced: slices.synced,
              isSynced: slices.isSynced,
              health: slices.health,
              nodesWithGpus: slices.nodesWithGpus,
              podGone: (node) => draNodes?.podGone(node) ?? false,
              nodeGone: (node) => draNodes?.nodeGone(node),
            },
    })
    if (slices !== undefined) {
      const nodes = yield* DraNodes.make({ slices, intake: () => intake, queue, outlet, now })
      draNodes = nodes
      yield* metrics.observeSliceOnlyNodes(nodes.sliceOnlyByReason)
      yield* intake.listed.pipe(Effect.andThen(nodes.listed), Effect.forkScoped)
    }
    yield* metrics.observeWorkQueueDepth(queue.depth)
    const failures = yield* FailureReporting.make({
      config,
      maxAttempts: tuning.maxAttempts,
      queue,
      intake,
      failing,
      outlet,
      now,
    })
    const readPod = yield* NodeReading.make({
      timeoutMs: config.timeoutMs,
      queue,
      intake,
      reader,
      failures,
      outlet,
      now,
      dra: draNodes,
    })

    const worker = Effect.gen(function* () {
      yield* intake.listed
      let running = true
      while (running) {
        running = yield* queue.processNext(readPod)
      }
    })

    if (config.resyncMs > 0) {
      const resync = Effect.gen(function* () {
        for (const pod of intake.pods.values()) {
          if (pod.ready) yield* queue.add(pod.key)
        }
      })
      yield* intake.ready.pipe(
        Effect.andThen(Effect.sleep(Duration.millis(config.resyncMs)).pipe(Effect.andThen(resync), Effect.forever)),
        Effect.forkScoped,
      )
    }

    const workers = yield* Effect.forEach(Array.from({ length: config.workers }), () => Effect.forkScoped(worker))
    const deadline = yield* Effect.serviceOption(ShutdownDeadline)
    // A read in flight can last until TIMEOUT, as long as Kubernetes' grace period: waiting for it would
    // leave the exporters no time to write what they hold, so it is abandoned.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        yield* queue.shutDown
        const budget = yield* closingBudget(deadline, Duration.millis(tuning.shutdownGraceMs))
        yield* Fiber.interruptAll(workers).pipe(Effect.interruptible, Effect.timeoutOption(budget))
      }),
    )

    return {
      observations: outlet.observations,
      ready: intake.ready,
      isReady: Effect.sync(intake.isReady),
      health: intake.health,
      readings: draNodes === undefined ? failures.readings : Effect.map(failures.readings, draNodes.readingsHealth),
    }
  })

/**
 * The config the receiver reads with: `auto` decided against the API (dra when it serves
 * `resource.k8s.io`, slices of `gpu.nvidia.com` exist and no device-plugin pod matches), logged once with
 * its reason; and in dra mode the version of `resource.k8s.io` the slices are read in.
 */
const discovered = Effect.fnUntraced(function* (api: KubeApi["Service"], configured: KubeExecConfig) {
  let config = configured
  let sliceVersion: ResourceSliceVersion | undefined
  if (configured.discovery === "auto") {
    const facts = yield* Effect.result(discoveryFacts(api, configured.targets["device-plugin"]))
    const decision = Result.isSuccess(facts)
      ? decideFromFacts(facts.success, configured.targets["device-plugin"])
      : {
          mode: "device-plugin" as const,
          reason: `the API server could not be asked (${facts.failure.message})`,
          sliceVersion: undefined,
        }
    yield* Effect.logInfo(`DISCOVERY=auto reads in ${decision.mode} mode: ${decision.reason}`).pipe(
      Effect.annotateLogs({ discovery: decision.mode, reason: decision.reason }),
    )
    config = configForMode(configured, decision.mode)
    sliceVersion = decision.sliceVersion
  } else if (configured.discovery === "dra") {
    const served = yield* Effect.result(DraSlices.servedSliceVersion(api).pipe(Effect.retry(DraSlices.discoveryRetry)))
    sliceVersion = Result.isSuccess(served) ? served.success : undefined
    if (sliceVersion === undefined) {
      yield* Effect.logWarning(
        "DISCOVERY=dra: no ResourceSlices to read (resource.k8s.io is not served, or discovery failed); reading the kubelet-plugin pods only",
      ).pipe(Effect.annotateLogs({ discovery: "dra" }))
    }
  }
  if (config.discovery !== "dra") sliceVersion = undefined
  return { config, sliceVersion }
})
