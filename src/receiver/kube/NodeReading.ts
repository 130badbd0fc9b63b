import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { KubeApi } from "../../kubeclient/rest/KubeApi.ts"
import type { WorkQueue } from "../../kubeclient/workqueue/WorkQueue.ts"
import { defectMessage } from "../../log/ShortMessage.ts"
import { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import { nodeRefOf } from "./ClusterNode.ts"
import { type DevicePluginPod, podRefOf } from "./DevicePluginPod.ts"
import type { DraNodes } from "./dra/DraNodes.ts"
import type { FailureReporting } from "./FailureReporting.ts"
import type { NvidiaSmiReader } from "./NvidiaSmiReader.ts"
import type { ObservationOutlet } from "./ObservationOutlet.ts"
import type { PodIntake } from "./PodIntake.ts"
import { readFailure } from "./ReadFailure.ts"

export interface NodeReadingOptions {
  /** The deadline of one pod: exec, node lookup and hand-off. */
  readonly timeoutMs: number
  readonly queue: WorkQueue<string>
  readonly intake: PodIntake
  readonly reader: NvidiaSmiReader
  readonly failures: FailureReporting
  readonly outlet: ObservationOutlet
  readonly now: Effect.Effect<Date>
  /** With `DISCOVERY=dra`: readings checked against the node's slices, failures left to them. */
  readonly dra?: Pick<DraNodes, "checked" | "readFailed" | "readSucceeded"> | undefined
}

/**
 * Reads the pod of a key taken from the work queue, within `timeoutMs`: nvidia-smi run in the pod on
 * its node, the reading handed over as `NodeRead` unless the pod or its node was deleted meanwhile.
 * A pod gone or no longer ready is forgotten; a failed reading or a hand-off past the deadline goes to
 * the failure reporting. A defect is logged, never kills the worker.
 */
export const make = Effect.fnUntraced(function* (options: NodeReadingOptions) {
  const { queue, intake, reader, failures, outlet, now } = options
  const metrics = yield* ServiceMetrics
  /** Whether a reading of `pod` still describes the cluster: neither the pod nor its node was deleted meanwhile. */
  const readingCurrent = (pod: DevicePluginPod) => () =>
    intake.podCurrent(pod) && intake.nodes.get(pod.nodeName) !== undefined

  // Untraced: a named Effect.fn captures a stack trace and opens a span on every reading.
  const readPod = Effect.fnUntraced(function* (key: string) {
    const pod = intake.pods.get(key)
    if (pod === undefined || !pod.ready) {
      yield* queue.forget(key)
      return
    }
    const deadlineMillis = (yield* Clock.currentTimeMillis) + options.timeoutMs
    const node = intake.nodes.get(pod.nodeName)
    const read =
      node === undefined
        ? Effect.fail(readFailure("node-unknown", `node ${pod.nodeName} is not known to the node informer`))
        : reader.read(pod, deadlineMillis, node.driverBranch)
    const outcome = yield* Effect.result(read)
    if (Result.isFailure(outcome)) {
      yield* metrics.readingFinished({ result: "failed", errorKind: outcome.failure.kind })
      yield* failures.failed(pod, outcome.failure, deadlineMillis)
      if (options.dra !== undefined && intake.podCurrent(pod)) {
        yield* options.dra.readFailed(pod.nodeName, outcome.failure.kind)
      }
      return
    }
    const reading =
      options.dra === undefined ? outcome.success : yield* options.dra.checked(pod.nodeName, outcome.success)
    options.dra?.readSucceeded(pod.nodeName)
    const time = yield* now
    yield* metrics.readingFinished({ result: reading.failures.length > 0 ? "partial" : "ok" })
    yield* metrics.readingSucceededAt(time)
    yield* failures.succeeded(pod)
    const handOff = yield* outlet.handOff(
      { _tag: "NodeRead", node: nodeRefOf(pod.nodeName, node), pod: podRefOf(pod), time, reading },
      { deadlineMillis, stillCurrent: readingCurrent(pod) },
    )
    if (handOff !== "timed-out") {
      yield* queue.forget(key)
      return
    }
    yield* failures.failed(
      pod,
      readFailure("handoff-timeout", "the reading could not be handed over before the pod's deadline"),
      deadlineMillis,
    )
  })

  return (key: string): Effect.Effect<void, never, KubeApi | ServiceMetrics> =>
    readPod(key).pipe(
      Effect.catchDefect((defect) =>
        Effect.logError("reading a pod failed unexpectedly").pipe(
          Effect.annotateLogs({ pod: key, cause: defectMessage(defect) }),
        ),
      ),
    )
})
