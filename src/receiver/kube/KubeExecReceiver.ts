import { type Cause, Clock, Duration, Effect, Fiber, Option, Queue, Result, type Scope } from "effect"
import type { Health } from "../../component/Component.ts"
import type { KubeExecConfig } from "../../config/ServiceConfig.ts"
import type { NodeObservation } from "../../domain/NodeObservation.ts"
import { ServiceMetrics } from "../../telemetry/ServiceMetrics.ts"
import { type ClusterNode, nodeRefOf } from "./ClusterNode.ts"
import { type DevicePluginPod, podRefOf } from "./DevicePluginPod.ts"
import type { CacheChange } from "./InformerCache.ts"
import type { BackoffPolicy } from "./KeyBackoff.ts"
import { KubeApi } from "./KubeApi.ts"
import * as NodeInformer from "./NodeInformer.ts"
import * as NvidiaSmiReader from "./NvidiaSmiReader.ts"
import * as PodInformer from "./PodInformer.ts"
import { type ReadFailure, readFailure, readingFailureOf } from "./ReadFailure.ts"
import { defaultInformerOptions, type InformerOptions } from "./ResourceInformer.ts"
import * as WorkQueue from "./WorkQueue.ts"

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
  /** How long closing waits for in-flight pods beyond their own deadline. */
  readonly shutdownGraceMs: number
}

export const defaultTuning: KubeExecTuning = {
  maxAttempts: 5,
  retryBackoff: { baseMs: 1_000, maxMs: 60_000, jitter: 0.5 },
  informer: defaultInformerOptions,
  observationBuffer: 1_024,
  shutdownGraceMs: 2_000,
}

/**
 * Starts the receiver: informers on the device-plugin pods and on nodes feed pod keys into a rate-limited
 * work queue; `workers` fibers read nvidia-smi in each ready pod within `timeoutMs` and hand the result
 * over as an observation. Closing the scope stops intake, lets in-flight pods finish or time out, then
 * closes the watches and ends `observations`.
 */
export const make = (
  config: KubeExecConfig,
  tuning: KubeExecTuning = defaultTuning,
): Effect.Effect<KubeExecReceiver, never, Scope.Scope | KubeApi | ServiceMetrics> =>
  Effect.gen(function* () {
    const metrics = yield* ServiceMetrics
    const api = yield* KubeApi
    const observations = yield* Queue.bounded<NodeObservation, Cause.Done>(tuning.observationBuffer)
    yield* Effect.addFinalizer(() => Queue.end(observations))

    const queue = yield* WorkQueue.make<string>(tuning.retryBackoff)
    const reader = NvidiaSmiReader.make({
      mode: config.nvidiaSmi.mode,
      maxOutputBytes: config.nvidiaSmi.maxOutputBytes,
      container: config.container,
    })
    const now = Clock.currentTimeMillis.pipe(Effect.map((millis) => new Date(millis)))

    let nodeCache: ((name: string) => ClusterNode | undefined) | undefined
    const nodeOf = (name: string) => nodeCache?.(name)

    const onNodeChange = (change: CacheChange<ClusterNode>): Effect.Effect<void> => {
      if (change._tag !== "Deleted") {
        return Effect.void
      }
      const node = change.object
      reader.forget(node.key)
      return now.pipe(
        Effect.flatMap((time) =>
          Queue.offer(observations, {
            _tag: "NodeGone",
            node: nodeRefOf(node.key, node),
            time,
            reason: "node-deleted",
          }),
        ),
        Effect.asVoid,
      )
    }

    const podGone = (pod: DevicePluginPod): Effect.Effect<void> =>
      Effect.gen(function* () {
        reader.forget(pod.nodeName)
        yield* queue.forget(pod.key)
        if (pod.nodeName === "") {
          return
        }
        yield* Queue.offer(observations, {
          _tag: "NodeGone",
          node: nodeRefOf(pod.nodeName, nodeOf(pod.nodeName)),
          time: yield* now,
          reason: "pod-deleted",
        })
      })

    const onPodChange = (change: CacheChange<DevicePluginPod>): Effect.Effect<void> => {
      switch (change._tag) {
        case "Added":
          return change.object.ready ? queue.add(change.object.key) : Effect.void
        case "Updated": {
          // A pod recreated under the same name is a new pod: the old one is gone.
          const replaced = change.previous.uid !== "" && change.previous.uid !== change.object.uid
          const gone = replaced ? podGone(change.previous) : Effect.void
          return gone.pipe(Effect.andThen(change.object.ready ? queue.add(change.object.key) : Effect.void))
        }
        case "Deleted":
          return podGone(change.object)
      }
    }

    const nodes = yield* NodeInformer.start(api, tuning.informer, onNodeChange)
    nodeCache = nodes.get
    const pods = yield* PodInformer.start(
      api,
      { namespace: config.namespace, labelSelector: config.labelSelector },
      tuning.informer,
      onPodChange,
    )
    const ready = Effect.all([nodes.synced, pods.synced], { discard: true })
    yield* metrics.observeWorkQueueDepth(queue.depth)

    /** Hands an observation over, waiting for room until `deadlineMillis`; `false` when the time ran out. */
    const handOff = (observation: NodeObservation, deadlineMillis: number): Effect.Effect<boolean> =>
      Effect.gen(function* () {
        const remaining = Math.max(0, deadlineMillis - (yield* Clock.currentTimeMillis))
        return yield* Queue.offer(observations, observation).pipe(
          Effect.timeoutOption(Duration.millis(remaining)),
          Effect.map(Option.isSome),
        )
      })

    const giveUpOrRetry = (pod: DevicePluginPod, failure: ReadFailure, deadlineMillis: number) =>
      Effect.gen(function* () {
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
          yield* Effect.logWarning("giving up on pod until its next update or resync").pipe(
            Effect.annotateLogs({
              pod: pod.key,
              node: pod.nodeName,
              kind: failure.kind,
              attempts,
              reason: failure.detail,
            }),
          )
        }
        // A failure is reported even when the pod's deadline has passed, within a deadline of its own.
        const reportBy = Math.max(deadlineMillis, (yield* Clock.currentTimeMillis) + config.timeoutMs)
        const handed = yield* handOff(
          {
            _tag: "NodeReadFailed",
            node: nodeRefOf(pod.nodeName, nodeOf(pod.nodeName)),
            pod: podRefOf(pod),
            time: yield* now,
            failure: readingFailureOf(failure),
          },
          reportBy,
        )
        if (!handed) {
          yield* Effect.logWarning("failed reading not handed over: the consumer is not taking observations").pipe(
            Effect.annotateLogs({ pod: pod.key, kind: failure.kind }),
          )
        }
      })

    const processKey = (key: string) =>
      Effect.gen(function* () {
        const pod = pods.get(key)
        if (pod === undefined || !pod.ready) {
          yield* queue.forget(key)
          return
        }
        const deadlineMillis = (yield* Clock.currentTimeMillis) + config.timeoutMs
        const node = nodeOf(pod.nodeName)
        const read =
          node === undefined
            ? Effect.fail(readFailure("node-unknown", `node ${pod.nodeName} is not known to the node informer`))
            : reader.read(pod, deadlineMillis)
        const outcome = yield* Effect.result(read)
        if (Result.isFailure(outcome)) {
          yield* metrics.readingFinished({ result: "failed", errorKind: outcome.failure.kind })
          return yield* giveUpOrRetry(pod, outcome.failure, deadlineMillis)
        }
        const reading = outcome.success
        const time = yield* now
        yield* metrics.readingFinished({ result: reading.failures.length > 0 ? "partial" : "ok" })
        yield* metrics.readingSucceededAt(time)
        const handed = yield* handOff(
          { _tag: "NodeRead", node: nodeRefOf(pod.nodeName, node), pod: podRefOf(pod), time, reading },
          deadlineMillis,
        )
        if (handed) {
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
            Effect.annotateLogs({ pod: key, cause: String(defect).slice(0, 200) }),
          ),
        ),
      )

    const worker = Effect.gen(function* () {
      yield* ready
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
    yield* Effect.addFinalizer(() =>
      queue.shutDown.pipe(
        Effect.andThen(Fiber.awaitAll(workers)),
        Effect.timeoutOption(Duration.millis(config.timeoutMs + tuning.shutdownGraceMs)),
      ),
    )

    return {
      observations,
      ready,
      isReady: Effect.sync(() => nodes.isSynced() && pods.isSynced()),
      health: Effect.all([nodes.health, pods.health]).pipe(
        Effect.map(([nodeHealth, podHealth]): Health => {
          const unhealthy = [nodeHealth, podHealth].filter((health) => !health.healthy)
          if (unhealthy.length === 0) {
            return { healthy: true }
          }
          return { healthy: false, message: unhealthy.map((health) => health.message ?? "unhealthy").join("; ") }
        }),
      ),
    }
  })
