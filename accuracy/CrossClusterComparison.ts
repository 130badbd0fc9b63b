import type { ClusterStay, CrossClusterMove, CrossClusterTruth } from "@gpu-serials/kube-sim"
import type { ExportedEvent } from "./ExportedEvent.ts"

export interface CrossClusterDisagreement {
  readonly kind: "missed-cross-cluster" | "false-cross-cluster" | "repeated-cross-cluster"
  readonly uuid: string
  readonly detail: string
}

/**
 * A hub's cross-cluster moves compared with the truth the clusters' ledgers give. Definitions (each counts
 * moves of one board from one cluster to another):
 *
 * - `true_cross_cluster_moves`: the moves both ledgers record (a `gpu-departed` paired with its
 *   `gpu-arrived`, `CrossClusterTruth.moves()`).
 * - A hub's cross-cluster `moved` is one whose `previousCluster` differs from its `cluster`. It reports
 *   the latest true move of its GPU from `previousCluster` to `cluster` made at most one reading window
 *   after the record's time, whose stay in `cluster` had not ended one reading window before it.
 *   `false_cross_cluster`: such records that report no true move; `repeated_cross_cluster`: records
 *   reporting a move another record reported already.
 * - Each true move is `cross_cluster_reported` when a record reports it; otherwise `unreportable` when its
 *   board spent less than `settleMs` (the longest a cluster's service goes without reading a node) in its
 *   origin before it left or in its destination until it left again or the run ended: by design a service
 *   may never have read it there; otherwise `missed_cross_cluster`. reported + unreportable + missed =
 *   true moves.
 */
export interface CrossClusterReport {
  readonly clusters: number
  readonly true_cross_cluster_moves: number
  readonly cross_cluster_reported: number
  readonly missed_cross_cluster: number
  readonly unreportable_cross_cluster: number
  readonly false_cross_cluster: number
  readonly repeated_cross_cluster: number
  readonly disagreements: ReadonlyArray<CrossClusterDisagreement>
}

export interface CrossClusterComparisonInput {
  readonly truth: CrossClusterTruth
  /** The hub's exported events, in order. */
  readonly events: ReadonlyArray<ExportedEvent>
  /** The longest a cluster's service goes without reading a node that answers. */
  readonly settleMs: number
  /** How long one reading of a node may take: a record's time is its reading's. */
  readonly readingWindowMs: number
  /** When the run ended (the services stopped), in milliseconds since the epoch. */
  readonly endedAt: number
}

const moveKey = (move: CrossClusterMove): string => `${move.swap}/${move.uuid}`

const place = (cluster: string, node: string): string => `${cluster}/${node}`

/** The stay a move ended (in its origin) and the one it began (in its destination). */
const staysOf = (
  stays: ReadonlyArray<ClusterStay>,
  move: CrossClusterMove,
): { readonly origin?: ClusterStay; readonly destination?: ClusterStay } => {
  const origin = stays.findLast((stay) => stay.cluster === move.from.cluster && stay.from <= move.time)
  const destination = stays.find((stay) => stay.cluster === move.to.cluster && stay.from >= move.time)
  return {
    ...(origin === undefined ? {} : { origin }),
    ...(destination === undefined ? {} : { destination }),
  }
}

export const compareCrossClusterMoves = (input: CrossClusterComparisonInput): CrossClusterReport => {
  const { truth, settleMs, readingWindowMs, endedAt } = input
  const moves = truth.moves()
  const byUuid = new Map<string, Array<CrossClusterMove>>()
  for (const move of moves) byUuid.set(move.uuid, [...(byUuid.get(move.uuid) ?? []), move])
  const staysByUuid = new Map<string, ReadonlyArray<ClusterStay>>()
  const staysFor = (uuid: string): ReadonlyArray<ClusterStay> => {
    const known = staysByUuid.get(uuid)
    if (known !== undefined) return known
    const stays = truth.history(uuid)?.stays ?? []
    staysByUuid.set(uuid, stays)
    return stays
  }
  const disagreements: Array<CrossClusterDisagreement> = []
  const reported = new Set<string>()
  let falseMoves = 0
  let repeated = 0
  for (const event of input.events) {
    if (event.event !== "moved" || event.previousCluster === undefined || event.previousCluster === event.cluster)
      continue
    const reportedMove = (byUuid.get(event.uuid) ?? []).findLast((move) => {
      if (move.from.cluster !== event.previousCluster || move.to.cluster !== event.cluster) return false
      if (move.time > event.time + readingWindowMs) return false
      const end = staysOf(staysFor(move.uuid), move).destination?.to
      return end === undefined || end >= event.time - readingWindowMs
    })
    const at = `${place(event.previousCluster, event.previousNode ?? "?")} -> ${place(event.cluster ?? "?", event.node)} at ${new Date(event.time).toISOString()}`
    if (reportedMove === undefined) {
      falseMoves++
      disagreements.push({ kind: "false-cross-cluster", uuid: event.uuid, detail: at })
    } else if (reported.has(moveKey(reportedMove))) {
      repeated++
      disagreements.push({ kind: "repeated-cross-cluster", uuid: event.uuid, detail: at })
    } else reported.add(moveKey(reportedMove))
  }
  let missed = 0
  let unreportable = 0
  for (const move of moves) {
    if (reported.has(moveKey(move))) continue
    const { origin, destination } = staysOf(staysFor(move.uuid), move)
    const lasted = (stay: ClusterStay | undefined): number =>
      stay === undefined ? 0 : (stay.to ?? endedAt) - stay.from
    if (lasted(origin) < settleMs || lasted(destination) < settleMs) unreportable++
    else {
      missed++
      disagreements.push({
        kind: "missed-cross-cluster",
        uuid: move.uuid,
        detail: `${place(move.from.cluster, move.from.node)} -> ${place(move.to.cluster, move.to.node)} at ${new Date(move.time).toISOString()}`,
      })
    }
  }
  return {
    clusters: truth.clusters().length,
    true_cross_cluster_moves: moves.length,
    cross_cluster_reported: reported.size,
    missed_cross_cluster: missed,
    unreportable_cross_cluster: unreportable,
    false_cross_cluster: falseMoves,
    repeated_cross_cluster: repeated,
    disagreements,
  }
}
