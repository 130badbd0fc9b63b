import type { DriverFailure } from "../catalog/SimulatedHost.ts"
import type { TrueHealthState } from "./TrueHealth.ts"

/** What every entry of the ledger carries: its order, when it happened and the cluster's resourceVersion then. */
interface Stamp {
  /** Position in the ledger, from 1: entries of the same millisecond keep their order. */
  readonly seq: number
  /** RFC 3339 with milliseconds: when the change became visible (committed to the API, or on the host). */
  readonly time: string
  /**
   * The resourceVersion of the change's commit for API objects (the watch event's), else the cluster's
   * resourceVersion when it happened (a GPU swap or a driver failure changes no API object).
   */
  readonly resourceVersion: number
}

/** Why a GPU is where it is from now on. */
export type PlacementCause = "cluster-start" | "node-joined" | "gpu-swap"

/**
 * One change of the simulated cluster's truth, as the ledger records it (one JSON object per line).
 * `gpu-placed` and `gpu-arrived` start a GPU's stay on a node (and end the stay before it); `gpu-gone`
 * (with its node) and `gpu-departed` (to another cluster) end it and the GPU's life in the cluster.
 */
export type LedgerEntry = Stamp &
  (
    | { readonly entry: "node-joined"; readonly node: string; readonly providerId: string }
    | { readonly entry: "node-left"; readonly node: string }
    | { readonly entry: "pod-created"; readonly node: string; readonly pod: string }
    | { readonly entry: "pod-ready"; readonly node: string; readonly pod: string }
    | { readonly entry: "pod-unready"; readonly node: string; readonly pod: string }
    /** Deletion requested: the pod is Terminating until its grace period ends. */
    | { readonly entry: "pod-terminating"; readonly node: string; readonly pod: string }
    /** `restarted`: its node is still there, so the DaemonSet replaces it; `node-left`: collected with its node. */
    | {
        readonly entry: "pod-deleted"
        readonly node: string
        readonly pod: string
        readonly reason: "restarted" | "node-left"
      }
    | {
        readonly entry: "gpu-placed"
        readonly uuid: string
        /** `N/A` where the product reports no serial. */
        readonly serial: string
        readonly node: string
        /** The machine: the node's `spec.providerID`, empty for a bare-metal node registered without one. */
        readonly providerId: string
        readonly cause: PlacementCause
      }
    | { readonly entry: "gpu-gone"; readonly uuid: string; readonly node: string }
    /**
     * A board of this cluster left it for another cluster of its exchange (a swap between clusters):
     * it ends the GPU's stay and its life here, as `gpu-gone` does. `swap` numbers the exchange's swap;
     * the other cluster's ledger has the `gpu-arrived` of the same swap and UUID, at the same time.
     */
    | {
        readonly entry: "gpu-departed"
        readonly uuid: string
        readonly serial: string
        readonly node: string
        readonly providerId: string
        readonly swap: number
        readonly toCluster: string
        readonly toNode: string
        readonly toProviderId: string
      }
    /**
     * A board from another cluster of the exchange was put on a node of this one: it starts a stay as
     * `gpu-placed` does; `health` is the true health it arrived with.
     */
    | {
        readonly entry: "gpu-arrived"
        readonly uuid: string
        readonly serial: string
        readonly node: string
        readonly providerId: string
        readonly swap: number
        readonly fromCluster: string
        readonly fromNode: string
        readonly fromProviderId: string
        readonly health: TrueHealthState
      }
    /** nvidia-smi on the node fails from now on; `unreadable` lists the GPUs it no longer reports. */
    | {
        readonly entry: "driver-failed"
        readonly node: string
        readonly failure: DriverFailure
        readonly unreadable: ReadonlyArray<string>
      }
    | { readonly entry: "driver-repaired"; readonly node: string }
    /** The health a GPU's board condition amounts to changed (it is `ok` from its first placement until the first). */
    | {
        readonly entry: "gpu-health"
        readonly uuid: string
        /** The node the GPU is on when it changes. */
        readonly node: string
        readonly from: TrueHealthState
        readonly to: TrueHealthState
      }
    /**
     * DRA clusters: the node's ResourceSlice was written; `gpus` are the GPUs it lists (a MIG GPU by its
     * parent UUID), `generation` its pool generation. It is the node's truth until the next one.
     */
    | {
        readonly entry: "slice-published"
        readonly node: string
        readonly slice: string
        readonly generation: number
        readonly gpus: ReadonlyArray<string>
      }
    /**
     * An injected disagreement of the slice just published with its node: a GPU of the node missing
     * from it (`missing-from-slices`) or a GPU that left still in it (`missing-from-reading`).
     */
    | {
        readonly entry: "dra-mismatch"
        readonly node: string
        readonly uuid: string
        readonly kind: "missing-from-slices" | "missing-from-reading"
      }
  )

export type LedgerEntryKind = LedgerEntry["entry"]

export const ledgerEntryKinds: ReadonlyArray<LedgerEntryKind> = [
  "node-joined",
  "node-left",
  "pod-created",
  "pod-ready",
  "pod-unready",
  "pod-terminating",
  "pod-deleted",
  "gpu-placed",
  "gpu-gone",
  "gpu-departed",
  "gpu-arrived",
  "driver-failed",
  "driver-repaired",
  "gpu-health",
  "slice-published",
  "dra-mismatch",
]

/** Distributes over the union, so an entry can be built without its stamp. */
type WithoutStamp<T> = T extends unknown ? Omit<T, keyof Stamp> : never

/** An entry before the ledger stamps it. */
export type LedgerFact = WithoutStamp<LedgerEntry>
