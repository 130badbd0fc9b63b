import * as Effect from "effect/Effect"
import type { Health } from "../../../component/Component.ts"
import type { NodeReading } from "../../../domain/NodeReading.ts"
import type { WorkQueue } from "../../../kubeclient/workqueue/WorkQueue.ts"
import { ServiceMetrics } from "../../../metrics/ServiceMetrics.ts"
import { nodeRefOf } from "../ClusterNode.ts"
import type { ObservationOutlet } from "../ObservationOutlet.ts"
import type { PodIntake } from "../PodIntake.ts"
import { transientKinds } from "../ReadFailure.ts"
import { crossCheck, mismatchKeyOf, sliceOnlyReading } from "./DraCrossCheck.ts"
import type { DraNodeDevices } from "./DraDevices.ts"
import type { DraSlices } from "./DraSlices.ts"

/** Why a DRA node is known from its slices alone: no plugin pod, its pod not ready, or a failure kind that stops readings. */
export type SliceOnlyReason = string

/** What the receiver does with a DRA node's slices besides reading its pod. */
export interface DraNodes {
  readonly slices: DraSlices
  /** Handles a change of a node's identity in its slices (see `DraSlices.start`); nothing before `listed`. */
  readonly identityChanged: (node: string, devices: DraNodeDevices | undefined) => Effect.Effect<void>
  /** Once the cluster was listed: each node with GPUs in its slices and no ready pod is handed over from its slices. */
  readonly listed: Effect.Effect<void>
  /** A reading checked against the slices: MIG devices added, a `dra-mismatch` warned once per node and change. */
  readonly checked: (node: string, reading: NodeReading) => Effect.Effect<NodeReading>
  /** A failed reading: a kind that is not transient leaves the node to its slices. */
  readonly readFailed: (node: string, kind: string) => Effect.Effect<void>
  readonly readSucceeded: (node: string) => void
  /**
   * The node's plugin pod went: true when its slices still list GPUs, which stay known as last read (the
   * pod's absence is no news of the GPUs); false to report the node gone as without DRA.
   */
  readonly podGone: (node: string) => boolean
  readonly nodeGone: (node: string) => void
  /** Nodes known from their slices alone, by reason (for the gauge). */
  readonly sliceOnlyByReason: () => ReadonlyMap<string, number>
  /** The receiver's readings health with the nodes known from their slices alone named. */
  readonly readingsHealth: (health: Health) => Health
}

export interface DraNodesOptions {
  readonly slices: DraSlices
  readonly intake: () => PodIntake
  readonly queue: WorkQueue<string>
  readonly outlet: ObservationOutlet
  readonly now: Effect.Effect<Date>
}

/** Where a reading from slices alone says it came from (the record's `source`). */
export const sliceSourceNamespace = "resourceslices"

export const make = Effect.fnUntraced(function* (options: DraNodesOptions) {
  const { slices, queue, outlet, now } = options
  const metrics = yield* ServiceMetrics
  const sliceOnly = new Map<string, SliceOnlyReason>()
  const mismatches = new Map<string, string>()
  let listedOnce = false

  const podOn = (node: string) => {
    for (const pod of options.intake().pods.values()) if (pod.nodeName === node) return pod
    return undefined
  }

  const handOffFromSlices = Effect.fnUntraced(function* (node: string, reason: SliceOnlyReason) {
    const devices = slices.devicesOf(node)
    const clusterNode = options.intake().nodes.get(node)
    if (devices === undefined || devices.gpus.length === 0 || clusterNode === undefined) return
    if (sliceOnly.get(node) !== reason) {
      yield* Effect.logWarning("DRA node known from its ResourceSlices alone: no serials until it can be read").pipe(
        Effect.annotateLogs({ node, reason, gpus: devices.gpus.length }),
      )
    }
    sliceOnly.set(node, reason)
    yield* outlet.handOff({
      _tag: "NodeRead",
      node: nodeRefOf(node, clusterNode),
      pod: { namespace: sliceSourceNamespace, name: slices.sliceNameOf(node) ?? node },
      time: yield* now,
      reading: sliceOnlyReading(devices),
    })
  })

  const withoutReadyPod = (node: string): Effect.Effect<void> => {
    const pod = podOn(node)
    if (pod?.ready === true) return queue.add(pod.key)
    return handOffFromSlices(node, pod === undefined ? "no-plugin-pod" : "pod-not-ready")
  }

  const identityChanged = (node: string, devices: DraNodeDevices | undefined): Effect.Effect<void> => {
    if (!listedOnce) return Effect.void
    if (devices === undefined) {
      sliceOnly.delete(node)
      return Effect.void
    }
    const reason = sliceOnly.get(node)
    // A node whose readings fail for good stays with its slices: their news is handed over from them.
    if (reason !== undefined && reason !== "no-plugin-pod" && reason !== "pod-not-ready") {
      return handOffFromSlices(node, reason)
    }
    return withoutReadyPod(node)
  }

  const listed = Effect.suspend(() => {
    listedOnce = true
    return Effect.forEach(
      slices.nodesWithGpus(),
      (node) => (podOn(node)?.ready === true ? Effect.void : withoutReadyPod(node)),
      { discard: true },
    )
  })

  const checked = Effect.fnUntraced(function* (node: string, reading: NodeReading) {
    const devices = slices.devicesOf(node)
    if (devices === undefined) return reading
    const result = crossCheck(reading, devices)
    const key = mismatchKeyOf(result)
    if ((mismatches.get(node) ?? "") !== key) {
      mismatches.set(node, key)
      if (key !== "") {
        yield* Effect.logWarning("dra-mismatch: nvidia-smi and the node's ResourceSlices list different GPUs").pipe(
          Effect.annotateLogs({
            warning: "dra-mismatch",
            node,
            missingFromSlices: result.missingFromSlices.join(","),
            missingFromReading: result.missingFromReading.join(","),
          }),
        )
        yield* metrics.draMismatches("missing-from-slices", result.missingFromSlices.length)
        yield* metrics.draMismatches("missing-from-reading", result.missingFromReading.length)
      }
    }
    return result.reading
  })

  const readFailed = (node: string, kind: string): Effect.Effect<void> =>
    transientKinds.has(kind as never) ? Effect.void : handOffFromSlices(node, kind)

  const sliceOnlyByReason = (): ReadonlyMap<string, number> => {
    const counts = new Map<string, number>()
    for (const reason of sliceOnly.values()) counts.set(reason, (counts.get(reason) ?? 0) + 1)
    return counts
  }

  const readingsHealth = (health: Health): Health => {
    if (sliceOnly.size === 0) return health
    const reasons = [...sliceOnlyByReason()].map(([reason, count]) => `${reason} ${count}`).join(", ")
    const message = `${sliceOnly.size} DRA node(s) known from their ResourceSlices alone, without serials (${reasons})`
    return { healthy: true, message: health.healthy ? message : `${message}; ${health.message ?? "readings fail"}` }
  }

  const dra: DraNodes = {
    slices,
    identityChanged,
    listed,
    checked,
    readFailed,
    readSucceeded: (node) => {
      sliceOnly.delete(node)
    },
    podGone: (node) => (slices.devicesOf(node)?.gpus.length ?? 0) > 0,
    nodeGone: (node) => {
      sliceOnly.delete(node)
      mismatches.delete(node)
    },
    sliceOnlyByReason,
    readingsHealth,
  }
  return dra
})
