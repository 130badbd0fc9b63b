import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Health } from "../../component/Component.ts"
import type { CacheChange } from "../../kubeclient/cache/InformerCache.ts"
import type { InformerOptions, ResourceInformer } from "../../kubeclient/cache/ResourceInformer.ts"
import { KubeApi } from "../../kubeclient/rest/KubeApi.ts"
import type { WorkQueue } from "../../kubeclient/workqueue/WorkQueue.ts"
import type { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import { type ClusterNode, nodeRefOf } from "./ClusterNode.ts"
import type { DevicePluginPod } from "./DevicePluginPod.ts"
import type { KubeExecConfig } from "./KubeExecConfig.ts"
import * as NodeInformer from "./NodeInformer.ts"
import type { NvidiaSmiReader } from "./NvidiaSmiReader.ts"
import type { NodeLabeller } from "./nodelabels/NodeLabeller.ts"
import type { ObservationOutlet } from "./ObservationOutlet.ts"
import * as PodInformer from "./PodInformer.ts"

/** The device-plugin pods and the nodes as the receiver knows them, from its two informers. */
export interface PodIntake {
  readonly pods: ResourceInformer<DevicePluginPod>
  readonly nodes: ResourceInformer<ClusterNode>
  /** Pods of the selection that are ready to be read. */
  readonly readyPods: () => number
  /** Completes once pods and nodes have both been listed once. */
  readonly ready: Effect.Effect<void>
  readonly isReady: () => boolean
  /** Completes once the first list of the cluster was handed over: readings may follow it. */
  readonly listed: Effect.Effect<void>
  /** Unhealthy before the first lists and while listing or watching fails. */
  readonly health: Effect.Effect<Health>
  /** Whether `pod` was not deleted (or replaced under its name) since it was taken from the queue. */
  readonly podCurrent: (pod: DevicePluginPod) => boolean
}

export interface PodIntakeOptions {
  readonly config: Pick<KubeExecConfig, "namespace" | "labelSelector" | "nodeLabels">
  readonly informer: InformerOptions
  /** Where ready pods are queued by key for the workers; a pod that goes is forgotten there. */
  readonly queue: WorkQueue<string>
  readonly outlet: ObservationOutlet
  /** What is learnt of a node and forgotten when it leaves or its pod is replaced (a driver upgrade restarts it). */
  readonly reader: Pick<NvidiaSmiReader, "forget">
  /** Forgets the failures of a node that left. */
  readonly forgetFailures: (node: string) => void
  /** Hears every node change first and labels the nodes, when node labels are written. */
  readonly labeller: NodeLabeller | undefined
  readonly now: Effect.Effect<Date>
  /** With `DISCOVERY=dra`: the NVIDIA driver's ResourceSlices, listed with pods and nodes. */
  readonly slices?: IntakeSlices | undefined
}

/** What the intake needs of the DRA driver's ResourceSlices. */
export interface IntakeSlices {
  readonly synced: Effect.Effect<void>
  readonly isSynced: () => boolean
  readonly health: Effect.Effect<Health>
  /** Nodes whose slices list GPUs: in the first list, they count as nodes with a pod (their GPUs are there). */
  readonly nodesWithGpus: () => Iterable<string>
  /** The node's plugin pod went: true when the node's GPUs stay known (its slices still list them). */
  readonly podGone: (node: string) => boolean
  readonly nodeGone: (node: string) => void
}

const combinedHealth = (healths: ReadonlyArray<Health>): Health => {
  const unhealthy = healths.filter((health) => !health.healthy)
  return unhealthy.length === 0
    ? { healthy: true }
    : { healthy: false, message: unhealthy.map((health) => health.message ?? "unhealthy").join("; ") }
}

/**
 * Starts the informers on the nodes and on the selected device-plugin pods: a ready pod is queued for
 * reading; a pod deleted or replaced and a node deleted are handed over as `NodeGone`. The first list of
 * both goes to the inventory before any reading, to compare its nodes with: what went while no one
 * watched (a node deleted while the service was down) has no deletion to report. A selection found empty
 * once listed is logged once each time it becomes empty.
 */
export const start = Effect.fnUntraced(function* (
  options: PodIntakeOptions,
): Effect.fn.Return<PodIntake, never, Scope.Scope | KubeApi | ServiceMetrics> {
  const { config, queue, outlet, reader, labeller, now } = options
  const api = yield* KubeApi

  const nodeChanged = (change: CacheChange<ClusterNode>): Effect.Effect<void> => {
    if (change._tag !== "Deleted") return Effect.void
    const node = change.object
    reader.forget(node.key)
    options.forgetFailures(node.key)
    options.slices?.nodeGone(node.key)
    return now.pipe(
      Effect.flatMap((time) =>
        outlet.handOff({ _tag: "NodeGone", node: nodeRefOf(node.key, node), time, reason: "node-deleted" }),
      ),
      Effect.asVoid,
    )
  }
  const nodes = yield* NodeInformer.start(
    api,
    options.informer,
    (change) =>
      labeller === undefined ? nodeChanged(change) : Effect.andThen(labeller.nodeChanged(change), nodeChanged(change)),
    labeller === undefined ? undefined : config.nodeLabels.prefix,
  )
  if (labeller !== undefined) yield* labeller.start(nodes, queue.depth)

  const podGone = Effect.fnUntraced(function* (pod: DevicePluginPod) {
    reader.forget(pod.nodeName)
    yield* queue.forget(pod.key)
    if (pod.nodeName === "") return
    if (options.slices?.podGone(pod.nodeName) === true) return
    yield* outlet.handOff({
      _tag: "NodeGone",
      node: nodeRefOf(pod.nodeName, nodes.get(pod.nodeName)),
      time: yield* now,
      reason: "pod-deleted",
    })
  })

  // Counted from the changes, as the informer's cache holds them, so nothing needs a pass over every pod.
  let podCount = 0
  let readyPods = 0
  let podsListed = false
  // One WARN each time the selection becomes empty, not one per change while it stays empty.
  let zeroPodsWarned = false
  const warnWhenNoPods = Effect.suspend(() => {
    if (!podsListed || podCount > 0) {
      zeroPodsWarned = false
      return Effect.void
    }
    if (zeroPodsWarned) return Effect.void
    zeroPodsWarned = true
    return Effect.logWarning(
      `no pod in namespace "${config.namespace}" matches label selector "${config.labelSelector}": nothing to read; check NAMESPACE and LABEL_SELECTOR`,
    ).pipe(Effect.annotateLogs({ namespace: config.namespace, labelSelector: config.labelSelector }))
  })

  const podChanged = (change: CacheChange<DevicePluginPod>): Effect.Effect<void> => {
    switch (change._tag) {
      case "Added":
        podCount++
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
        podCount--
        if (change.object.ready) readyPods--
        return podGone(change.object).pipe(Effect.andThen(warnWhenNoPods))
    }
  }
  const pods = yield* PodInformer.start(
    api,
    { namespace: config.namespace, labelSelector: config.labelSelector },
    options.informer,
    podChanged,
  )
  yield* pods.synced.pipe(
    Effect.andThen(
      Effect.sync(() => {
        podsListed = true
      }),
    ),
    Effect.andThen(warnWhenNoPods),
    Effect.forkScoped,
  )

  const slices = options.slices
  const ready = Effect.all([nodes.synced, pods.synced, ...(slices === undefined ? [] : [slices.synced])], {
    discard: true,
  })
  const listed = yield* Deferred.make<void>()
  yield* ready.pipe(
    Effect.andThen(now),
    Effect.flatMap((time) => {
      const nodesWithPod = new Set<string>()
      for (const pod of pods.values()) if (pod.nodeName !== "") nodesWithPod.add(pod.nodeName)
      for (const node of slices?.nodesWithGpus() ?? []) nodesWithPod.add(node)
      const names = new Set<string>()
      for (const node of nodes.values()) names.add(node.key)
      return outlet.handOff({ _tag: "ClusterListed", time, nodes: names, nodesWithPod })
    }),
    Effect.andThen(Deferred.succeed(listed, undefined)),
    Effect.forkScoped,
  )

  return {
    pods,
    nodes,
    readyPods: () => readyPods,
    ready,
    isReady: () => nodes.isSynced() && pods.isSynced() && (slices?.isSynced() ?? true),
    listed: Deferred.await(listed),
    health: Effect.all([nodes.health, pods.health, ...(slices === undefined ? [] : [slices.health])]).pipe(
      Effect.map(combinedHealth),
    ),
    podCurrent: (pod) => pods.get(pod.key)?.uid === pod.uid,
  }
})
