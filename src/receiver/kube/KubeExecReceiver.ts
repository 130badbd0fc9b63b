import type { Cause, Queue, Scope } from "effect"
import { Clock, Duration, Effect, Fiber, Result } from "effect"
import type { Health } from "../../component/Component.ts"
import { closingBudget, ShutdownDeadline } from "../../component/ShutdownDeadline.ts"
import type { KubeExecConfig } from "../../config/ServiceConfig.ts"
import type { NodeObservation } from "../../domain/NodeObservation.ts"
import { ServiceMetrics } from "../../telemetry/ServiceMetrics.ts"
import { nodeRefOf } from "./ClusterNode.ts"
import { type DevicePluginPod, podRefOf } from "./DevicePluginPod.ts"
import type { BackoffPolicy } from "./KeyBackoff.ts"
import { KubeApi } from "./KubeApi.ts"
import * as NodeInformer from "./NodeInformer.ts"
import * as NvidiaSmiReader from "./NvidiaSmiReader.ts"
import * as ObservationOutlet from "./ObservationOutlet.ts"
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
  /** How long closing waits for interrupted reads to close their exec sessions. */
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
 * over as an observation. Closing the scope stops intake and interrupts the reads in flight (their
 * readings are abandoned: not retried, not counted, not handed over), then closes the watches and ends
 * `observations`.
 */
export const make = (
  config: KubeExecConfig,
  tuning: KubeExecTuning = defaultTuning,
): Effect.Effect<KubeExecReceiver, never, Scope.Scope | KubeApi | ServiceMetrics> =>
  Effect.gen(function* () {
    const metrics = yield* ServiceMetrics
    const api = yield* KubeApi
    const outlet = yield* ObservationOutlet.make(tuning.observationBuffer)
    const queue = yield* WorkQueue.make<string>(tuning.retryBackoff)
    const reader = NvidiaSmiReader.make({
      mode: config.nvidiaSmi.mode,
      maxOutputBytes: config.nvidiaSmi.maxOutputBytes,
      container: config.container,
    })
    const now = Clock.currentTimeMillis.pipe(Effect.map((millis) => new Date(millis)))

    const nodes = yield* NodeInformer.start(api, tuning.informer, (change) => {
      if (change._tag !== "Deleted") {
        return Effect.void
      }
      const node = change.object
      reader.forget(node.key)
      return now.pipe(
        Effect.flatMap((time) =>
          outlet.handOff({ _tag: "NodeGone", node: nodeRefOf(node.key, node), time, reason: "node-deleted" }),
        ),
        Effect.asVoid,
      )
    })

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

    const pods = yield* PodInformer.start(
      api,
      { namespace: config.namespace, labelSelector: config.labelSelector },
      tuning.informer,
      (change) => {
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
      },
    )
    const ready = Effect.all([nodes.synced, pods.synced], { discard: true })
    const isReady = () => nodes.isSynced() && pods.isSynced()
    yield* metrics.observeWorkQueueDepth(queue.depth)

    /** Whether `pod` was not deleted (or replaced under its name) since it was taken from the queue. */
    const podCurrent = (pod: DevicePluginPod) => () => pods.get(pod.key)?.uid === pod.uid
    /** Whether a reading of `pod` still describes the cluster: neither the pod nor its node was deleted meanwhile. */
    const readingCurrent = (pod: DevicePluginPod) => () => podCurrent(pod)() && nodes.get(pod.nodeName) !== undefined

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
    }
  })
