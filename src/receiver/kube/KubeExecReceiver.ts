import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type { Health } from "../../component/Component.ts"
import { closingBudget, ShutdownDeadline } from "../../component/ShutdownDeadline.ts"
import type { NodeObservation } from "../../domain/NodeObservation.ts"
import type { CacheChange } from "../../kubeclient/cache/InformerCache.ts"
import { defaultInformerOptions, type InformerOptions } from "../../kubeclient/cache/ResourceInformer.ts"
import { KubeApi } from "../../kubeclient/rest/KubeApi.ts"
import type { BackoffPolicy } from "../../kubeclient/workqueue/KeyBackoff.ts"
import * as WorkQueue from "../../kubeclient/workqueue/WorkQueue.ts"
import { defectMessage } from "../../log/ShortMessage.ts"
import { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import { outputExcerpt } from "../../nvsmi/OutputExcerpt.ts"
import type { InventoryFeed } from "../../pipeline/InventoryFeed.ts"
import { type ClusterNode, nodeRefOf } from "./ClusterNode.ts"
import { type DevicePluginPod, podRefOf } from "./DevicePluginPod.ts"
import { defaultFailingNodesOptions, FailingNodes, type FailingNodesOptions } from "./FailingNodes.ts"
import type { KubeExecConfig } from "./KubeExecConfig.ts"
import * as NodeInformer from "./NodeInformer.ts"
import * as NvidiaSmiReader from "./NvidiaSmiReader.ts"
import * as NodeLabeller from "./nodelabels/NodeLabeller.ts"
import * as ObservationOutlet from "./ObservationOutlet.ts"
import * as PodInformer from "./PodInformer.ts"
import { type ReadFailure, readFailure, readingFailureOf, transientKinds } from "./ReadFailure.ts"
import { type ReadingsVerdict, readingsVerdict } from "./ReadingsVerdict.ts"

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
 * work queue; `workers` fibers read nvidia-smi in each ready pod within `timeoutMs` and hand the result
 * over as an observation. With node labels enabled, a node labeller (see `NodeLabeller`) keeps each node's
 * labels equal to the GPUs the inventory feed says it has, on the same API client. Closing the scope
 * stops intake and interrupts the reads in flight (their readings are abandoned: not retried, not
 * counted, not handed over), then closes the watches and ends `observations`; the labeller closes last,
 * writing the inventory's last changes once the feed has ended (see `NodeLabeller`).
 */
export const make = (
  config: KubeExecConfig,
  tuning: KubeExecTuning = defaultTuning,
): Effect.Effect<KubeExecReceiver, never, Scope.Scope | KubeApi | ServiceMetrics | InventoryFeed> =>
  Effect.gen(function* () {
    const metrics = yield* ServiceMetrics
    const api = yield* KubeApi
    // Made first, so it closes last: after the outlet ended, once the inventory took what it still held.
    const labeller = config.nodeLabels.enabled
      ? yield* NodeLabeller.make({ prefix: config.nodeLabels.prefix, ...tuning.nodeLabeller })
      : undefined
    const outlet = yield* ObservationOutlet.make(tuning.observationBuffer)
    const queue = yield* WorkQueue.make<string>(tuning.retryBackoff)
    const reader = NvidiaSmiReader.make({
      mode: config.nvidiaSmi.mode,
      maxOutputBytes: config.nvidiaSmi.maxOutputBytes,
      container: config.container,
    })
    const now = Clock.currentTimeMillis.pipe(Effect.map((millis) => new Date(millis)))
    const failing = new FailingNodes(tuning.failingNodes)
    yield* metrics.observeFailingNodes(() => failing.failingByKind())
    yield* metrics.workQueueMayGiveUp([...transientKinds])

    const nodeChanged = (change: CacheChange<ClusterNode>): Effect.Effect<void> => {
      if (change._tag !== "Deleted") {
        return Effect.void
      }
      const node = change.object
      reader.forget(node.key)
      failing.forget(node.key)
      return now.pipe(
        Effect.flatMap((time) =>
          outlet.handOff({ _tag: "NodeGone", node: nodeRefOf(node.key, node), time, reason: "node-deleted" }),
        ),
        Effect.asVoid,
      )
    }

    const nodes = yield* NodeInformer.start(
      api,
      tuning.informer,
      (change) =>
        labeller === undefined
          ? nodeChanged(change)
          : Effect.andThen(labeller.nodeChanged(change), nodeChanged(change)),
      labeller === undefined ? undefined : config.nodeLabels.prefix,
    )
    if (labeller !== undefined) yield* labeller.start(nodes)

    const podGone = Effect.fnUntraced(function* (pod: DevicePluginPod) {
      reader.forget(pod.nodeName)
      yield* queue.forget(pod.key)
      if (pod.nodeName === "") {
        return
      }
      yield* outlet.handOff({
        _tag: "NodeGone",
        node: nodeRefOf(pod.nodeName, nodes.get(pod.nodeName)),
        time: yield* now,
        reason: "pod-deleted",
      })
    })

    // Counted by the handler below, so the readings verdict needs no pass over every pod.
    let readyPods = 0
    // The pod informer's cache once `start` returned; its handler may run before that.
    let podCount = () => 0
    let podsListed = () => false
    // One WARN each time the selection becomes empty, not one per change while it stays empty.
    let zeroPodsWarned = false
    const warnWhenNoPods = Effect.suspend(() => {
      if (!podsListed() || podCount() > 0) {
        zeroPodsWarned = false
        return Effect.void
      }
      if (zeroPodsWarned) return Effect.void
      zeroPodsWarned = true
      return Effect.logWarning(
        `no pod in namespace "${config.namespace}" matches label selector "${config.labelSelector}": nothing to read; check NAMESPACE and LABEL_SELECTOR`,
      ).pipe(Effect.annotateLogs({ namespace: config.namespace, labelSelector: config.labelSelector }))
    })

    const pods = yield* PodInformer.start(
      api,
      { namespace: config.namespace, labelSelector: config.labelSelector },
      tuning.informer,
      (change) => {
        switch (change._tag) {
          case "Added":
            zeroPodsWarned = false
            if (change.object.ready) readyPods++
            return change.object.ready ? queue.add(change.object.key) : Effect.void
          case "Updated": {
            readyPods += Number(change.object.ready) - Number(change.previous.ready)
            // A pod recreated under the same name is a new pod: the old one is gone.
            const replaced = change.previous.uid !== "" && change.previous.uid !== change.object.uid
            const gone = replaced ? podGone(change.previous) : Effect.void
            return gone.pipe(Effect.andThen(change.object.ready ? queue.add(change.object.key) : Effect.void))
          }
          case "Deleted":
            if (change.object.ready) readyPods--
            return podGone(change.object).pipe(Effect.andThen(warnWhenNoPods))
        }
      },
    )
    podCount = pods.size
    podsListed = pods.isSynced
    yield* pods.synced.pipe(Effect.andThen(warnWhenNoPods), Effect.forkScoped)
    const ready = Effect.all([nodes.synced, pods.synced], { discard: true })
    const isReady = () => nodes.isSynced() && pods.isSynced()
    // What went while no one watched (a node deleted while the service was down) has no deletion to report:
    // the first list goes to the inventory, before any reading, to compare its nodes with.
    const listed = yield* Deferred.make<void>()
    yield* ready.pipe(
      Effect.andThen(now),
      Effect.flatMap((time) => {
        const nodesWithPod = new Set<string>()
        for (const pod of pods.values()) if (pod.nodeName !== "") nodesWithPod.add(pod.nodeName)
        const names = new Set<string>()
        for (const node of nodes.values()) names.add(node.key)
        return outlet.handOff({ _tag: "ClusterListed", time, nodes: names, nodesWithPod })
      }),
      Effect.andThen(Deferred.succeed(listed, undefined)),
      Effect.forkScoped,
    )
    yield* metrics.observeWorkQueueDepth(queue.depth)

    /** Whether `pod` was not deleted (or replaced under its name) since it was taken from the queue. */
    const podCurrent = (pod: DevicePluginPod) => () => pods.get(pod.key)?.uid === pod.uid
    /** Whether a reading of `pod` still describes the cluster: neither the pod nor its node was deleted meanwhile. */
    const readingCurrent = (pod: DevicePluginPod) => () => podCurrent(pod)() && nodes.get(pod.nodeName) !== undefined

    const verdict = (): ReadingsVerdict =>
      readingsVerdict(failing.summary(), {
        namespace: config.namespace,
        labelSelector: config.labelSelector,
        container: config.container,
        listed: pods.isSynced(),
        pods: pods.size(),
        readyPods,
      })

    // One ERROR line when readings start failing as a whole, and again if the kind behind it changes.
    let failingKindLogged: string | undefined
    const judgeReadings = Effect.suspend(() => {
      const current = verdict()
      if (current._tag !== "Failing") {
        failingKindLogged = undefined
        return Effect.void
      }
      if (failingKindLogged === current.kind) return Effect.void
      failingKindLogged = current.kind
      return Effect.logError(`readings fail: ${current.reason}`).pipe(
        Effect.annotateLogs({
          kind: current.kind,
          ...(current.setting === undefined ? {} : { setting: current.setting }),
        }),
      )
    })

    /** A reading that failed for good: one WARN line per node and kind per interval, with the repeats held back. */
    const reportFailure = Effect.fnUntraced(function* (pod: DevicePluginPod, failure: ReadFailure, attempts: number) {
      const decision = failing.failed(pod.nodeName, failure.kind, yield* Clock.currentTimeMillis)
      if (decision._tag === "Log") {
        yield* Effect.logWarning("node reading failed; the pod is read again at its next update or resync").pipe(
          Effect.annotateLogs({
            node: pod.nodeName,
            pod: pod.key,
            kind: failure.kind,
            attempts,
            reason: failure.detail,
            ...(failure.excerpt === undefined ? {} : { excerpt: outputExcerpt(failure.excerpt) }),
            ...(decision.suppressed > 0 ? { suppressed: decision.suppressed } : {}),
          }),
        )
      }
      yield* judgeReadings
    })

    const giveUpOrRetry = Effect.fnUntraced(function* (
      pod: DevicePluginPod,
      failure: ReadFailure,
      deadlineMillis: number,
    ) {
      if (!podCurrent(pod)()) {
        yield* queue.forget(pod.key)
        return
      }
      const attempts = (yield* queue.retries(pod.key)) + 1
      if (failure.transient && attempts < tuning.maxAttempts) {
        yield* queue.addRateLimited(pod.key)
        yield* metrics.workQueueRetried
        yield* Effect.logDebug("pod read failed, retrying").pipe(
          Effect.annotateLogs({ pod: pod.key, node: pod.nodeName, kind: failure.kind, attempt: attempts }),
        )
        return
      }
      yield* queue.forget(pod.key)
      if (failure.transient) {
        yield* metrics.workQueueGaveUp(failure.kind)
      }
      yield* reportFailure(pod, failure, attempts)
      // A failure is reported even when the pod's deadline has passed, within a deadline of its own.
      const reportBy = Math.max(deadlineMillis, (yield* Clock.currentTimeMillis) + config.timeoutMs)
      const outcome = yield* outlet.handOff(
        {
          _tag: "NodeReadFailed",
          node: nodeRefOf(pod.nodeName, nodes.get(pod.nodeName)),
          pod: podRefOf(pod),
          time: yield* now,
          failure: readingFailureOf(failure),
        },
        { deadlineMillis: reportBy, stillCurrent: podCurrent(pod) },
      )
      if (outcome === "timed-out") {
        yield* Effect.logWarning("failed reading not handed over: the consumer is not taking observations").pipe(
          Effect.annotateLogs({ pod: pod.key, kind: failure.kind }),
        )
      }
    })

    const processKey = Effect.fn("KubeExecReceiver.readPod")(function* (key: string) {
      const pod = pods.get(key)
      if (pod === undefined || !pod.ready) {
        yield* queue.forget(key)
        return
      }
      const deadlineMillis = (yield* Clock.currentTimeMillis) + config.timeoutMs
      const node = nodes.get(pod.nodeName)
      const read =
        node === undefined
          ? Effect.fail(readFailure("node-unknown", `node ${pod.nodeName} is not known to the node informer`))
          : reader.read(pod, deadlineMillis, node.driverBranch)
      const outcome = yield* Effect.result(read)
      if (Result.isFailure(outcome)) {
        yield* metrics.readingFinished({ result: "failed", errorKind: outcome.failure.kind })
        return yield* giveUpOrRetry(pod, outcome.failure, deadlineMillis)
      }
      const reading = outcome.success
      const time = yield* now
      yield* metrics.readingFinished({ result: reading.failures.length > 0 ? "partial" : "ok" })
      yield* metrics.readingSucceededAt(time)
      const recoveredFrom = failing.succeeded(pod.nodeName)
      if (recoveredFrom !== undefined) {
        yield* Effect.logInfo("node reading recovered").pipe(
          Effect.annotateLogs({ node: pod.nodeName, pod: pod.key, kind: recoveredFrom }),
        )
      }
      yield* judgeReadings
      const handOff = yield* outlet.handOff(
        { _tag: "NodeRead", node: nodeRefOf(pod.nodeName, node), pod: podRefOf(pod), time, reading },
        { deadlineMillis, stillCurrent: readingCurrent(pod) },
      )
      if (handOff !== "timed-out") {
        yield* queue.forget(key)
        return
      }
      yield* giveUpOrRetry(
        pod,
        readFailure("handoff-timeout", "the reading could not be handed over before the pod's deadline"),
        deadlineMillis,
      )
    })

    const processSafely = (key: string) =>
      processKey(key).pipe(
        Effect.catchDefect((defect) =>
          Effect.logError("reading a pod failed unexpectedly").pipe(
            Effect.annotateLogs({ pod: key, cause: defectMessage(defect) }),
          ),
        ),
      )

    const worker = Effect.gen(function* () {
      yield* Deferred.await(listed)
      let running = true
      while (running) {
        running = yield* queue.processNext(processSafely)
      }
    })

    if (config.resyncMs > 0) {
      const resync = Effect.gen(function* () {
        for (const pod of pods.values()) {
          if (pod.ready) {
            yield* queue.add(pod.key)
          }
        }
      })
      yield* ready.pipe(
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
      ready,
      isReady: Effect.sync(isReady),
      health: Effect.all([nodes.health, pods.health]).pipe(
        Effect.map(([nodeHealth, podHealth]): Health => {
          const unhealthy = [nodeHealth, podHealth].filter((health) => !health.healthy)
          if (unhealthy.length === 0) {
            return { healthy: true }
          }
          return { healthy: false, message: unhealthy.map((health) => health.message ?? "unhealthy").join("; ") }
        }),
      ),
      readings: Effect.sync((): Health => {
        const current = verdict()
        return current._tag === "Ready" ? { healthy: true } : { healthy: false, message: current.reason }
      }),
    }
  })
