import type { NodeReading } from "./NodeReading.ts"

/** The device-plugin pod a reading came from. */
export interface PodRef {
  readonly namespace: string
  readonly name: string
}

/** The Kubernetes node a reading belongs to, as the node informer knows it. */
export interface NodeRef {
  readonly name: string
  readonly uid?: string
  readonly providerId?: string
}

/** Why a node could not be read; `kind` is a bounded metric label (an nvidia-smi error kind or an exec failure kind). */
export interface ReadingFailure {
  readonly kind: string
  /** Short, user-facing; never the raw output. */
  readonly message: string
}

/**
 * What the receiver hands to the inventory processor: one fresh reading of a node's GPUs, a failed
 * attempt, the news that a node's device-plugin pod or the node itself is gone, or its first complete
 * list of the cluster.
 */
export type NodeObservation =
  | {
      readonly _tag: "NodeRead"
      readonly node: NodeRef
      readonly pod: PodRef
      readonly time: Date
      readonly reading: NodeReading
    }
  | {
      readonly _tag: "NodeReadFailed"
      readonly node: NodeRef
      readonly pod: PodRef
      readonly time: Date
      readonly failure: ReadingFailure
    }
  | {
      /** The node's device-plugin pod was deleted, or the node left the cluster. */
      readonly _tag: "NodeGone"
      readonly node: NodeRef
      readonly time: Date
      readonly reason: "pod-deleted" | "node-deleted"
    }
  | {
      /**
       * The cluster as the receiver first listed it, before any reading: every node, and the nodes that
       * have a device-plugin pod. What went while no one watched (a node deleted, a pod gone while the
       * service was down) has no deletion to report, so the inventory learns it from what is missing here.
       */
      readonly _tag: "ClusterListed"
      readonly time: Date
      readonly nodes: ReadonlySet<string>
      readonly nodesWithPod: ReadonlySet<string>
    }
