import type { GpuRecord } from "../../domain/GpuRecord.ts"
import type { GpuPlace, HubFleetChange, HubFleetSnapshot } from "../../domain/HubFleetChange.ts"
import { recordId } from "../../domain/RecordId.ts"

/**
 * The fleet across clusters as a hub sees it, keyed by UUID, and how the clusters' records change it, as
 * plain functions over plain data: time comes with each record, or as `now` for `tick`.
 *
 * Rules:
 * - Records of one cluster come in that cluster's order; clusters interleave in any order.
 * - A `removed` in cluster A is held, not forwarded: the GPU may turn up in another cluster (an RMA
 *   replacement landing in another region, a tray re-racked). When it does within `windowMs` of the
 *   removal, the two are one `moved` with the new cluster, node and machine and `previousCluster`,
 *   `previousNode`, `previousMachine` from the removal. When the window ends with no sign of it elsewhere,
 *   `tick` forwards the removal as it was.
 * - A GPU that turns up in cluster B while the hub still places it in cluster A (B's record came before A's
 *   removal) is `moved` from where A had it; A's removal, when it comes, is the tail of that move and is
 *   dropped.
 * - "Turns up" is any record of B that is not a removal: an `added`, `moved` or `observed` becomes the
 *   cross-cluster `moved`; a `health` is forwarded after it.
 * - A GPU that comes back in the cluster whose removal is held gets that removal forwarded, then its own
 *   record: the cluster's own word, in its order.
 * - Every other record passes through as the cluster wrote it (moves within a cluster, health changes,
 *   reports), and places the GPU in its cluster.
 * - A `moved` the hub makes has a deterministic id from its new place and time, so handing it over again
 *   (a batch delivered twice) de-duplicates downstream.
 *
 * The state is changed in place; the changes to keep in the hub's store come with the events, so that a
 * restarted hub knows where each GPU is and which removals it holds. A record that leaves a GPU where it
 * was (an `observed` report, a `health` change) changes nothing to store.
 */

/** What the hub keeps of the fleet: every GPU's place, and the removals it holds, by UUID. */
export interface HubFleet {
  readonly places: Map<string, GpuPlace>
  /** The `removed` records held for a move across clusters, until their window ends. */
  readonly held: Map<string, GpuRecord>
}

export interface HubFleetRules {
  /** How long after a removal an appearance in another cluster is still the same GPU's move (`CROSS_CLUSTER_WINDOW`). */
  readonly windowMs: number
}

export interface HubFleetTransition {
  /** The records to hand to the exporters, in order. */
  readonly records: ReadonlyArray<GpuRecord>
  /** The store's changes, in order; a later change of a UUID wins. */
  readonly changes: ReadonlyArray<HubFleetChange>
}

/** An empty fleet, or the one a hub's store held. */
export const emptyHubFleet = (): HubFleet => ({ places: new Map(), held: new Map() })

const placeOf = (record: GpuRecord): GpuPlace => ({
  cluster: record.cluster,
  node: record.node,
  machine: record.machine,
})

const timeOf = (record: GpuRecord): number => Date.parse(record.time)

/** The `moved` the hub makes of `record` (the GPU's new place) and where it was before. */
export const crossClusterMove = (record: GpuRecord, previous: GpuPlace): GpuRecord => {
  const {
    previousNode: _previousNode,
    previousMachine: _previousMachine,
    previousHealthState: _previousHealthState,
    ...facts
  } = record
  return {
    ...facts,
    event: "moved",
    id: recordId({
      cluster: record.cluster,
      uuid: record.uuid,
      event: "moved",
      node: record.node,
      machine: record.machine,
      time: record.time,
    }),
    previousCluster: previous.cluster,
    previousNode: previous.node,
    previousMachine: previous.machine,
  }
}

/** Applies one cluster's records, in that cluster's order, to `fleet`. */
export const transition = (
  fleet: HubFleet,
  records: ReadonlyArray<GpuRecord>,
  rules: HubFleetRules,
): HubFleetTransition => {
  const out: Array<GpuRecord> = []
  const changes: Array<HubFleetChange> = []
  /** Places the GPU where the record says; a change for the store only where its place is new. */
  const place = (record: GpuRecord, placed: GpuPlace | undefined) => {
    if (
      placed !== undefined &&
      placed.cluster === record.cluster &&
      placed.node === record.node &&
      placed.machine === record.machine
    )
      return
    const next = placeOf(record)
    fleet.places.set(record.uuid, next)
    changes.push({ _tag: "Place", uuid: record.uuid, place: next })
  }
  const release = (uuid: string) => {
    fleet.held.delete(uuid)
    changes.push({ _tag: "Release", uuid })
  }
  for (const record of records) {
    const { uuid } = record
    const placed = fleet.places.get(uuid)
    const held = fleet.held.get(uuid)
    if (record.event === "removed") {
      // The GPU already turned up in another cluster: this removal is the tail of that move.
      if (placed !== undefined && placed.cluster !== record.cluster) continue
      // A removal held from earlier (the GPU left, came back unseen, left again) is superseded by this one.
      if (placed !== undefined) {
        fleet.places.delete(uuid)
        changes.push({ _tag: "Forget", uuid })
      }
      fleet.held.set(uuid, record)
      changes.push({ _tag: "Hold", uuid, removal: record })
      continue
    }
    let previous: GpuPlace | undefined
    if (held !== undefined) {
      release(uuid)
      const inWindow = timeOf(record) - timeOf(held) <= rules.windowMs
      if (held.cluster !== record.cluster && inWindow) previous = placeOf(held)
      else out.push(held)
    } else if (placed !== undefined && placed.cluster !== record.cluster) {
      previous = placed
    }
    if (previous === undefined) {
      out.push(record)
    } else {
      out.push(crossClusterMove(record, previous))
      if (record.event === "health") out.push(record)
    }
    place(record, fleet.places.get(uuid))
  }
  return { records: out, changes }
}

/** Forwards the held removals whose window has ended by `now`, as the clusters wrote them, oldest first. */
export const tick = (fleet: HubFleet, now: Date, rules: HubFleetRules): HubFleetTransition => {
  const due = [...fleet.held.values()]
    .filter((removal) => timeOf(removal) + rules.windowMs <= now.getTime())
    .sort((left, right) => timeOf(left) - timeOf(right))
  for (const removal of due) fleet.held.delete(removal.uuid)
  return { records: due, changes: due.map((removal) => ({ _tag: "Release", uuid: removal.uuid })) }
}

/** The fleet a hub's store held. */
export const restoredHubFleet = (snapshot: HubFleetSnapshot): HubFleet => ({
  places: new Map(snapshot.places),
  held: new Map(snapshot.held),
})
