import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Health } from "../../component/Component.ts"
import type { WorkQueue } from "../../kubeclient/workqueue/WorkQueue.ts"
import { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import { outputExcerpt } from "../../nvsmi/OutputExcerpt.ts"
import { nodeRefOf } from "./ClusterNode.ts"
import { type DevicePluginPod, podRefOf } from "./DevicePluginPod.ts"
import type { FailingNodes } from "./FailingNodes.ts"
import type { KubeExecConfig } from "./KubeExecConfig.ts"
import type { ObservationOutlet } from "./ObservationOutlet.ts"
import type { PodIntake } from "./PodIntake.ts"
import { type ReadFailure, readingFailureOf } from "./ReadFailure.ts"
import { type ReadingsVerdict, readingsVerdict } from "./ReadingsVerdict.ts"

/** What becomes of readings that fail, and what they say about the configuration as a whole. */
export interface FailureReporting {
  /**
   * A reading of `pod` failed: retried with backoff while the failure is transient and attempts remain;
   * otherwise given up until the pod's next update or resync, logged, and handed over as `NodeReadFailed`.
   */
  readonly failed: (pod: DevicePluginPod, failure: ReadFailure, deadlineMillis: number) => Effect.Effect<void>
  /** A reading of `pod` succeeded: the node's recovery is logged, and the readings judged again. */
  readonly succeeded: (pod: DevicePluginPod) => Effect.Effect<void>
  /**
   * Whether readings work (see `ReadingsVerdict`): unhealthy when no pod matches the selection, or once
   * every ready pod's node was read, when no reading ever succeeded or every node fails with the same
   * configuration kind; healthy again after a success.
   */
  readonly readings: Effect.Effect<Health>
}

export interface FailureReportingOptions {
  readonly config: Pick<KubeExecConfig, "namespace" | "labelSelector" | "container" | "timeoutMs">
  /** Attempts per pod for transient failures, the first included. */
  readonly maxAttempts: number
  readonly queue: WorkQueue<string>
  readonly intake: PodIntake
  readonly failing: FailingNodes
  readonly outlet: ObservationOutlet
  readonly now: Effect.Effect<Date>
}

/**
 * Reports failed readings as an operator reads them: a node that keeps failing the same way logs one WARN
 * line per interval (with the repeats it held back), readings that fail as a whole log one ERROR line
 * (again when the kind behind it changes), and `readings` names what to check.
 */
export const make = Effect.fnUntraced(function* (options: FailureReportingOptions) {
  const { config, queue, intake, failing, outlet, now } = options
  const metrics = yield* ServiceMetrics

  const verdict = (): ReadingsVerdict =>
    readingsVerdict(failing.summary(), {
      namespace: config.namespace,
      labelSelector: config.labelSelector,
      container: config.container,
      listed: intake.pods.isSynced(),
      pods: intake.pods.size(),
      readyPods: intake.readyPods(),
    })

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

  const logFailure = Effect.fnUntraced(function* (pod: DevicePluginPod, failure: ReadFailure, attempts: number) {
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

  const failed = Effect.fnUntraced(function* (pod: DevicePluginPod, failure: ReadFailure, deadlineMillis: number) {
    if (!intake.podCurrent(pod)) {
      yield* queue.forget(pod.key)
      return
    }
    const attempts = (yield* queue.retries(pod.key)) + 1
    if (failure.transient && attempts < options.maxAttempts) {
      yield* queue.addRateLimited(pod.key)
      yield* metrics.workQueueRetried
      yield* Effect.logDebug("pod read failed, retrying").pipe(
        Effect.annotateLogs({ pod: pod.key, node: pod.nodeName, kind: failure.kind, attempt: attempts }),
      )
      return
    }
    yield* queue.forget(pod.key)
    if (failure.transient) yield* metrics.workQueueGaveUp(failure.kind)
    yield* logFailure(pod, failure, attempts)
    // A failure is reported even when the pod's deadline has passed, within a deadline of its own.
    const reportBy = Math.max(deadlineMillis, (yield* Clock.currentTimeMillis) + config.timeoutMs)
    const outcome = yield* outlet.handOff(
      {
        _tag: "NodeReadFailed",
        node: nodeRefOf(pod.nodeName, intake.nodes.get(pod.nodeName)),
        pod: podRefOf(pod),
        time: yield* now,
        failure: readingFailureOf(failure),
      },
      { deadlineMillis: reportBy, stillCurrent: () => intake.podCurrent(pod) },
    )
    if (outcome === "timed-out") {
      yield* Effect.logWarning("failed reading not handed over: the consumer is not taking observations").pipe(
        Effect.annotateLogs({ pod: pod.key, kind: failure.kind }),
      )
    }
  })

  const succeeded = Effect.fnUntraced(function* (pod: DevicePluginPod) {
    const recoveredFrom = failing.succeeded(pod.nodeName)
    if (recoveredFrom !== undefined) {
      yield* Effect.logInfo("node reading recovered").pipe(
        Effect.annotateLogs({ node: pod.nodeName, pod: pod.key, kind: recoveredFrom }),
      )
    }
    yield* judgeReadings
  })

  const reporting: FailureReporting = {
    failed,
    succeeded,
    readings: Effect.sync((): Health => {
      const current = verdict()
      return current._tag === "Ready" ? { healthy: true } : { healthy: false, message: current.reason }
    }),
  }
  return reporting
})
