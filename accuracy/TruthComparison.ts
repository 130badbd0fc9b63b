import { FleetTruth, type GpuHistory, type GpuStay, type LedgerEntry } from "@gpu-serials/kube-sim"
import type { ExportedEvent } from "./ExportedEvent.ts"
import { compareHealth, type HealthDisagreement, type HealthFigures } from "./HealthComparison.ts"

/** When one service process was reading: from its first readings (its first exported record) until it stopped. */
export interface ServiceRunSpan {
  readonly startedAt: number
  readonly stoppedAt: number
}

/** What the comparison takes: the ledger, the events one service exported, and the run's settings. */
export interface ComparisonInput {
  /** The simulated cluster's ledger, oldest entry first. */
  readonly ledger: ReadonlyArray<LedgerEntry>
  /** Every event the service exported, in the order it exported them, run after run. */
  readonly events: ReadonlyArray<ExportedEvent>
  /** The service's processes, by run number. */
  readonly runs: ReadonlyArray<ServiceRunSpan>
  /** Whether the inventory store carries what the service knew across a restart (every store but `memory`). */
  readonly durable: boolean
  /** Whether it carries each GPU's last health too (`nats`, `postgres`). */
  readonly keepsHealth: boolean
  /**
   * Whether the store keeps the GPUs of a node deleted while no process watched it, or before a pending
   * removal was due, so that the next process removes them (`nats`, `postgres`); the node labels go with
   * their node, and `memory` keeps nothing.
   */
  readonly keepsGoneNodes: boolean
  /**
   * Whether the store keeps one GPU per index of a node, the one seen last (the node labels): a GPU the
   * inventory still held on a node where another GPU had since been read at its index (it left in a swap
   * and its new node was not read yet) is not in the store for the next process.
   */
  readonly keepsOneGpuPerIndex: boolean
  /** The service's `REMOVAL_GRACE`. */
  readonly removalGraceMs: number
  /** How long after its grace a removal may come: the inventory's tick. */
  readonly removalTickMs: number
  /**
   * How long before its record's time a reading may have been taken: the service's `TIMEOUT`, the deadline
   * of one pod's exec, node lookup and hand-off. A record says where a GPU was at some moment of that window.
   */
  readonly readingWindowMs: number
  /** When churn and faults stopped. */
  readonly churnStoppedAt: number
  /** The longest a service goes without reading a node that answers: see `HealthComparisonInput`. */
  readonly healthSettleMs: number
}

/** One disagreement, for a person to look into: what kind, which GPU, and what was seen. */
export type Disagreement = LocationDisagreement | HealthDisagreement

interface LocationDisagreement {
  readonly kind:
    | "false-moved"
    | "repeated-moved"
    | "missed-move"
    | "false-removed"
    | "missed-removed"
    | "duplicate-added"
    | "false-added"
    | "wrong-location-at-end"
  readonly uuid: string
  readonly detail: string
}

/**
 * The inventory a service exported, compared with the truth. Definitions (each counts GPUs by UUID):
 *
 * - The service's inventory is the fold of its events: `added`, `moved` and `observed` put a GPU at the
 *   record's node and machine (`providerId`), `removed` takes it out. With a durable store the fold runs
 *   across restarts, as the service's own inventory does; with `memory` each process starts from nothing.
 * - `gpus`: GPUs in the cluster at the end that nvidia-smi on their node reports; `unreadable_gpus` those a
 *   broken driver hides, which no reading can show (they are left out of every other count).
 * - `gpus_at_true_location` / `wrong_location_at_end`: of `gpus`, those the final inventory holds at their
 *   true node and machine, and the others (not held, or held elsewhere).
 * - A stay (a time a GPU spent on one node) is settled when it lasted at least `REMOVAL_GRACE`, or lasts
 *   still at the end. A true move is a change of node or machine between two consecutive settled stays of
 *   one GPU: a GPU moved and moved back within the grace made no true move (by design the service may or
 *   may not have read it in between; either way it is where it was). `true_moves` counts them.
 * - A true move is reported when a `moved` event put the GPU at its destination between the end of the
 *   origin stay and the end of the destination stay: `moved_reported`; `missed_moves` are the others that
 *   the service could have reported. With `memory`, a move is unreportable by design unless one process
 *   ran from `REMOVAL_GRACE` before the GPU left its origin until `REMOVAL_GRACE` after it arrived (a
 *   new process has no origin to compare with): `unreportable_moves`, counted in neither. So is a move
 *   across a restart whose store had no record of the GPU: a store keeping one GPU per index of a node
 *   (the node labels) keeps, of a GPU that left in a swap and the one read at its index after it, the
 *   latter, and the fold drops the former at the restart as the store did.
 * - `false_moved`: `moved` events without a true relocation behind them: the GPU was not at the record's
 *   node and machine at any moment of the reading window, or had never been on `previousNode` before.
 *   `repeated_moved`: `moved` events putting a GPU where the inventory already held it (a move reported
 *   twice). A true move is reported exactly once when it is reported and no `moved` repeats it.
 * - `gpus_gone`: GPUs that left the cluster (with their node); `removed_reported`: those with a
 *   `removed` event after they left; `missed_removed`: those the final inventory still holds, unless the
 *   store could not keep them: a store that loses the GPUs of deleted nodes (node labels go with their
 *   node; `memory` keeps nothing) can report a removal only when one process ran from before the node
 *   left until its grace and the inventory's tick were over: `unreportable_removals` otherwise.
 * - `false_removed`: `removed` events for a GPU still in the cluster at the record's time (the decision's).
 * - `duplicate_added`: `added` events for a GPU the inventory already held, unless the store loses the GPUs
 *   of deleted nodes and the node it held the GPU on left before the process started, or the store kept
 *   another GPU at its index (the process had no record of the GPU); `false_added`: `added` events
 *   placing a GPU where it was at no moment of the reading window.
 * - `converged_s`: seconds from the end of churn and faults to the arrival of the last event that changed
 *   the inventory (0 when none did), when the final inventory equals the truth (every GPU of `gpus` at its
 *   true location and in its true health state, none held that left and could be reported removed); null
 *   when it does not.
 * - The health figures (`true_health_changes`, `health_reported`, `missed_health`, `unreportable_health`,
 *   `false_health`, `wrong_health_at_end`) are defined at `compareHealth`.
 */
export interface AccuracyReport extends HealthFigures {
  readonly gpus: number
  readonly unreadable_gpus: number
  readonly gpus_at_true_location: number
  readonly wrong_location_at_end: number
  readonly true_moves: number
  readonly moved_reported: number
  readonly missed_moves: number
  readonly unreportable_moves: number
  readonly false_moved: number
  readonly repeated_moved: number
  readonly gpus_gone: number
  readonly removed_reported: number
  readonly missed_removed: number
  readonly unreportable_removals: number
  readonly false_removed: number
  readonly duplicate_added: number
  readonly false_added: number
  readonly converged_s: number | null
  readonly events: Readonly<Record<ExportedEvent["event"], number>>
  readonly disagreements: ReadonlyArray<Disagreement>
}

/** Where the folded inventory holds a GPU. */
interface Held {
  readonly node: string
  readonly providerId: string
  /** Its index on the node, and the time of the record that last placed or re-affirmed it there. */
  readonly index?: number
  readonly time?: number
}

/**
 * The GPUs a store keeping one GPU per index of a node has no record of: of two or more GPUs held at one
 * index of a node, all but the one placed or re-affirmed last.
 */
const shadowedAtIndex = (held: ReadonlyMap<string, Held>): ReadonlyArray<string> => {
  const latest = new Map<string, { readonly uuid: string; readonly time: number }>()
  const shadowed: Array<string> = []
  for (const [uuid, place] of held) {
    if (place.index === undefined) continue
    const slot = `${place.node}/${place.index}`
    const time = place.time ?? 0
    const other = latest.get(slot)
    if (other === undefined) latest.set(slot, { uuid, time })
    else if (time > other.time) {
      shadowed.push(other.uuid)
      latest.set(slot, { uuid, time })
    } else shadowed.push(uuid)
  }
  return shadowed
}

interface TrueMove {
  readonly uuid: string
  readonly origin: GpuStay
  readonly destination: GpuStay
}

const sameLocation = (a: Held, b: Held): boolean => a.node === b.node && a.providerId === b.providerId

const at = (stay: GpuStay): string => `${stay.node} (${stay.providerId === "" ? "no providerID" : stay.providerId})`

/** Whether a stay overlaps the window of a reading recorded at `time`. */
const overlapsReading = (stay: GpuStay, time: number, windowMs: number): boolean =>
  stay.from <= time && (stay.to ?? Number.POSITIVE_INFINITY) >= time - windowMs

const settledStays = (history: GpuHistory, graceMs: number): ReadonlyArray<GpuStay> =>
  history.stays.filter((stay) => stay.to === undefined || stay.to - stay.from >= graceMs)

const trueMovesOf = (history: GpuHistory, graceMs: number): ReadonlyArray<TrueMove> => {
  const settled = settledStays(history, graceMs)
  const moves: Array<TrueMove> = []
  for (let index = 1; index < settled.length; index++) {
    const origin = settled[index - 1]
    const destination = settled[index]
    if (origin !== undefined && destination !== undefined && !sameLocation(origin, destination))
      moves.push({ uuid: history.uuid, origin, destination })
  }
  return moves
}

/** Compares the events a service exported with the ledger's truth; see `AccuracyReport` for the definitions. */
export const compareWithTruth = (input: ComparisonInput): AccuracyReport => {
  const truth = FleetTruth.of(input.ledger)
  const window = input.readingWindowMs
  const disagreements: Array<Disagreement> = []
  const disagree = (kind: LocationDisagreement["kind"], uuid: string, detail: string) =>
    disagreements.push({ kind, uuid, detail })

  const stayAt = (uuid: string, place: Held, time: number): GpuStay | undefined =>
    truth.history(uuid)?.stays.find((stay) => sameLocation(stay, place) && overlapsReading(stay, time, window))

  const relocated = (event: ExportedEvent): boolean => {
    const stays = truth.history(event.uuid)?.stays ?? []
    const arrival = stays.findLastIndex(
      (stay) => sameLocation(stay, event) && overlapsReading(stay, event.time, window),
    )
    return arrival > 0 && stays.slice(0, arrival).some((stay) => stay.node === event.previousNode)
  }

  const nodeLeftAt = new Map<string, Array<number>>()
  for (const entry of input.ledger)
    if (entry.entry === "node-left")
      nodeLeftAt.set(entry.node, [...(nodeLeftAt.get(entry.node) ?? []), Date.parse(entry.time)])
  /** A store that loses a deleted node's GPUs gives a process started after the node left no record of them. */
  const forgotten = (place: Held, run: number): boolean => {
    if (input.keepsGoneNodes) return false
    const startedAt = input.runs[run]?.startedAt
    return startedAt !== undefined && (nodeLeftAt.get(place.node) ?? []).some((time) => time <= startedAt)
  }

  const inClusterAt = (uuid: string, time: number): boolean => {
    const history = truth.history(uuid)
    const first = history?.stays[0]
    return first !== undefined && first.from <= time && (history?.goneAt ?? Number.POSITIVE_INFINITY) > time
  }

  let held = new Map<string, Held>()
  let run: number | undefined
  let lastChange: number | undefined
  const counts = { added: 0, moved: 0, removed: 0, observed: 0, health: 0 }
  let falseMoved = 0
  let repeatedMoved = 0
  let falseRemoved = 0
  let duplicateAdded = 0
  let falseAdded = 0
  const moves = new Map<string, Array<ExportedEvent>>()
  const removals = new Map<string, Array<ExportedEvent>>()

  /** GPUs the store had no record of at a restart, with the new process's start. */
  const unrecorded = new Map<string, Array<number>>()
  for (const event of input.events) {
    if (!input.durable && event.run !== run) held = new Map()
    if (input.durable && input.keepsOneGpuPerIndex && run !== undefined && event.run !== run) {
      const startedAt = input.runs[event.run]?.startedAt ?? event.time
      for (const uuid of shadowedAtIndex(held)) {
        held.delete(uuid)
        unrecorded.set(uuid, [...(unrecorded.get(uuid) ?? []), startedAt])
      }
    }
    run = event.run
    counts[event.event]++
    const before = held.get(event.uuid)
    const place: Held = {
      node: event.node,
      providerId: event.providerId,
      ...(event.index === undefined ? {} : { index: event.index }),
      time: event.time,
    }
    switch (event.event) {
      case "added":
        if (before !== undefined && !forgotten(before, event.run)) {
          duplicateAdded++
          disagree("duplicate-added", event.uuid, `added on ${event.node} while held on ${before.node}`)
        }
        if (stayAt(event.uuid, place, event.time) === undefined) {
          falseAdded++
          disagree("false-added", event.uuid, `added on ${event.node}, where it was not`)
        }
        break
      case "moved":
        moves.set(event.uuid, [...(moves.get(event.uuid) ?? []), event])
        if (before !== undefined && sameLocation(before, place)) {
          repeatedMoved++
          disagree("repeated-moved", event.uuid, `moved to ${event.node}, where it was held already`)
        }
        if (!relocated(event)) {
          falseMoved++
          disagree("false-moved", event.uuid, `moved from ${event.previousNode ?? "?"} to ${event.node}`)
        }
        break
      case "removed":
        removals.set(event.uuid, [...(removals.get(event.uuid) ?? []), event])
        if (inClusterAt(event.uuid, event.time)) {
          falseRemoved++
          const where = truth.history(event.uuid)?.stays.findLast((stay) => stay.from <= event.time)
          disagree(
            "false-removed",
            event.uuid,
            `removed from ${event.node} at ${new Date(event.time).toISOString()} while on ${where === undefined ? "?" : at(where)}`,
          )
        }
        break
      case "observed":
      case "health":
        break
    }
    const changed =
      event.event === "health" ||
      (event.event === "removed" ? before !== undefined : before === undefined || !sameLocation(before, place))
    if (changed) lastChange = event.arrivedAt
    if (event.event === "removed") held.delete(event.uuid)
    else held.set(event.uuid, place)
  }

  const graceMs = input.removalGraceMs
  /** A restart after the GPU left its origin, whose store had no record of it, left no origin to report the move from. */
  const forgottenInMove = (move: TrueMove): boolean =>
    (unrecorded.get(move.uuid) ?? []).some(
      (time) => time > (move.origin.to ?? 0) && time <= (move.destination.to ?? Number.POSITIVE_INFINITY),
    )
  const reportable = (move: TrueMove): boolean =>
    (input.durable && !forgottenInMove(move)) ||
    input.runs.some(
      (span) => span.startedAt <= (move.origin.to ?? 0) - graceMs && span.stoppedAt >= move.destination.from + graceMs,
    )
  let trueMoves = 0
  let movedReported = 0
  let missedMoves = 0
  let unreportableMoves = 0
  const removalReportable = (goneAt: number): boolean =>
    input.keepsGoneNodes ||
    input.runs.some((span) => span.startedAt <= goneAt && span.stoppedAt >= goneAt + graceMs + input.removalTickMs)
  let gpusGone = 0
  let removedReported = 0
  let missedRemoved = 0
  let unreportableRemovals = 0
  for (const history of truth.gpus()) {
    for (const move of trueMovesOf(history, graceMs)) {
      trueMoves++
      if (!reportable(move)) {
        unreportableMoves++
        continue
      }
      const end = move.destination.to ?? Number.POSITIVE_INFINITY
      const reported = (moves.get(move.uuid) ?? []).some(
        (event) => sameLocation(event, move.destination) && event.time > (move.origin.to ?? 0) && event.time <= end,
      )
      if (reported) movedReported++
      else {
        missedMoves++
        disagree("missed-move", move.uuid, `from ${at(move.origin)} to ${at(move.destination)}`)
      }
    }
    if (history.goneAt === undefined) continue
    gpusGone++
    const goneAt = history.goneAt
    if ((removals.get(history.uuid) ?? []).some((event) => event.time >= goneAt)) removedReported++
    const still = held.get(history.uuid)
    if (!removalReportable(goneAt)) unreportableRemovals++
    else if (still !== undefined) {
      missedRemoved++
      disagree(
        "missed-removed",
        history.uuid,
        `left with ${history.stays.at(-1)?.node ?? "?"} at ${new Date(goneAt).toISOString()}, still held on ${still.node}`,
      )
    }
  }

  const where = truth.whereNow()
  let gpus = 0
  let unreadable = 0
  let atTrueLocation = 0
  for (const gpu of where.values()) {
    if (!gpu.readable) {
      unreadable++
      continue
    }
    gpus++
    const known = held.get(gpu.uuid)
    if (known !== undefined && sameLocation(known, gpu)) atTrueLocation++
    else
      disagree(
        "wrong-location-at-end",
        gpu.uuid,
        `on ${gpu.node}, ${known === undefined ? "not held" : `held on ${known.node} (${known.providerId})`}`,
      )
  }
  const strangers = [...held.keys()].filter((uuid) => truth.history(uuid) === undefined).length
  const wrongAtEnd = gpus - atTrueLocation
  const health = compareHealth(input, truth)
  disagreements.push(...health.disagreements)
  const converged =
    wrongAtEnd === 0 && missedRemoved === 0 && strangers === 0 && health.figures.wrong_health_at_end === 0
  return {
    gpus,
    unreadable_gpus: unreadable,
    gpus_at_true_location: atTrueLocation,
    wrong_location_at_end: wrongAtEnd,
    true_moves: trueMoves,
    moved_reported: movedReported,
    missed_moves: missedMoves,
    unreportable_moves: unreportableMoves,
    false_moved: falseMoved,
    repeated_moved: repeatedMoved,
    gpus_gone: gpusGone,
    removed_reported: removedReported,
    missed_removed: missedRemoved,
    unreportable_removals: unreportableRemovals,
    false_removed: falseRemoved,
    duplicate_added: duplicateAdded,
    false_added: falseAdded,
    ...health.figures,
    converged_s: converged ? Math.max(0, ((lastChange ?? 0) - input.churnStoppedAt) / 1000) : null,
    events: counts,
    disagreements,
  }
}
