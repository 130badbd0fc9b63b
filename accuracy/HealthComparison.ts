import type { FleetTruth, HealthStay, LedgerEntry, TrueHealthState } from "@gpu-serials/kube-sim"
import type { ExportedEvent } from "./ExportedEvent.ts"
import type { ServiceRunSpan } from "./TruthComparison.ts"

/** What the health comparison takes beside the ledger's truth. */
export interface HealthComparisonInput {
  readonly ledger: ReadonlyArray<LedgerEntry>
  readonly events: ReadonlyArray<ExportedEvent>
  readonly runs: ReadonlyArray<ServiceRunSpan>
  /** Whether the store carries each GPU's last health across a restart (`nats`, `postgres`). */
  readonly keepsHealth: boolean
  /** How long before its record's time a reading may have been taken (the service's `TIMEOUT`). */
  readonly readingWindowMs: number
  /**
   * The longest a service can go without reading a node whose pod and driver answer: its resync, the
   * reading of every node at its QPS, and one reading's deadline. A health state that lasts this long is
   * seen by every reading service; one that lasts less may be seen or not.
   */
  readonly healthSettleMs: number
}

/** One health disagreement, for a person to look into. */
export interface HealthDisagreement {
  readonly kind: "false-health" | "missed-health" | "wrong-health-at-end"
  readonly uuid: string
  readonly detail: string
}

export interface HealthFigures {
  readonly true_health_changes: number
  readonly health_reported: number
  readonly missed_health: number
  readonly unreportable_health: number
  readonly false_health: number
  readonly wrong_health_at_end: number
}

interface TrueChange {
  readonly uuid: string
  readonly from: HealthStay
  readonly to: HealthStay
}

/**
 * The changes of one GPU's health a reading service sees: its health stays shorter than the settle time
 * are dropped (a state that came and went between two readings of the node), the rest merged where
 * they follow each other in the same state; a change is the step from one of those to the next.
 */
const trueChangesOf = (uuid: string, health: ReadonlyArray<HealthStay>, settleMs: number): Array<TrueChange> => {
  const merged: Array<HealthStay> = []
  for (const stay of health) {
    if (stay.to !== undefined && stay.to - stay.from < settleMs) continue
    const last = merged.at(-1)
    if (last?.state === stay.state) merged[merged.length - 1] = { ...stay, from: last.from }
    else merged.push(stay)
  }
  const changes: Array<TrueChange> = []
  for (let index = 1; index < merged.length; index++) {
    const from = merged[index - 1]
    const to = merged[index]
    if (from !== undefined && to !== undefined) changes.push({ uuid, from, to })
  }
  return changes
}

/** How long a service process ran while a GPU was in a health stay. */
const overlapMs = (stay: HealthStay, span: ServiceRunSpan): number =>
  Math.min(stay.to ?? Number.POSITIVE_INFINITY, span.stoppedAt) - Math.max(stay.from, span.startedAt)

/** The times a driver failure hid a GPU from nvidia-smi, by UUID, from the ledger's driver entries. */
const hiddenSpans = (ledger: ReadonlyArray<LedgerEntry>): Map<string, Array<{ from: number; to: number }>> => {
  const spans = new Map<string, Array<{ from: number; to: number }>>()
  const open = new Map<string, { readonly uuids: ReadonlyArray<string>; readonly from: number }>()
  const close = (node: string, time: number) => {
    const failure = open.get(node)
    if (failure === undefined) return
    open.delete(node)
    for (const uuid of failure.uuids) spans.set(uuid, [...(spans.get(uuid) ?? []), { from: failure.from, to: time }])
  }
  for (const entry of ledger) {
    const time = Date.parse(entry.time)
    if (entry.entry === "driver-failed") {
      close(entry.node, time)
      open.set(entry.node, { uuids: entry.unreadable, from: time })
    } else if (entry.entry === "driver-repaired" || entry.entry === "node-left") close(entry.node, time)
  }
  for (const node of [...open.keys()]) close(node, Number.POSITIVE_INFINITY)
  return spans
}

/** The true health of a GPU at a moment, or undefined before its first placement. */
const stateAt = (health: ReadonlyArray<HealthStay>, time: number): TrueHealthState | undefined =>
  health.findLast((stay) => stay.from <= time)?.state

/**
 * The health a service reported, compared with the ledger's. Definitions (each counts changes of a GPU's
 * health `state`, by UUID; a change of reasons alone is not one):
 *
 * - A true change is a step between two consecutive settled health stays of a GPU (see `trueChangesOf`):
 *   `true_health_changes`.
 * - A change is reported (`health_reported`) when a report of its new state has a time from a reading
 *   window before the change to a reading window after its new state ended. A report is a record whose
 *   `previousHealthState` differs from its `health.state` (a `health` event).
 * - A change not reported is `missed_health` when a service could have seen it: a service process ran
 *   for twice `healthSettleMs` (a reading an exec fault spoils is taken again a read period later) of the
 *   state before and of the state after (one and the same process with a
 *   store that keeps no health, `memory` and `node-labels`; with `nats` and `postgres` the next process
 *   compares with what the store kept), and the GPU stayed in the cluster and readable (no driver failure hid
 *   it) for `healthSettleMs` after the change. The others are `unreportable_health`.
 * - `false_health`: reports whose new state was the GPU's true state at no moment of the reading window,
 *   or whose previous state is not the one the service's records last gave the GPU, or gave it before
 *   a record of the same reading (a `moved` with the new health precedes the change).
 * - `wrong_health_at_end`: readable GPUs whose last reported state differs from their true state at the end.
 */
export const compareHealth = (
  input: HealthComparisonInput,
  truth: FleetTruth,
): { readonly figures: HealthFigures; readonly disagreements: ReadonlyArray<HealthDisagreement> } => {
  const window = input.readingWindowMs
  const settleMs = input.healthSettleMs
  const disagreements: Array<HealthDisagreement> = []
  const disagree = (kind: HealthDisagreement["kind"], uuid: string, detail: string) =>
    disagreements.push({ kind, uuid, detail })
  const healthOf = (uuid: string) => truth.history(uuid)?.health ?? []

  /** The state the service's records last gave each GPU, and the one before them when they came from the same reading. */
  let held = new Map<string, { state: TrueHealthState; time: number; before?: TrueHealthState }>()
  let run: number | undefined
  let falseHealth = 0
  const reports = new Map<string, Array<ExportedEvent>>()
  for (const event of input.events) {
    if (!input.keepsHealth && event.run !== run) held = new Map()
    run = event.run
    if (event.event === "removed") {
      held.delete(event.uuid)
      continue
    }
    const state = event.health
    if (state === undefined) continue
    const previous = event.previousHealthState
    if (previous !== undefined && previous !== state) {
      reports.set(event.uuid, [...(reports.get(event.uuid) ?? []), event])
      const health = healthOf(event.uuid)
      const trueInWindow = health.some(
        (stay) =>
          stay.state === state &&
          stay.from <= event.time &&
          (stay.to ?? Number.POSITIVE_INFINITY) >= event.time - window,
      )
      // A reading that moves a GPU and changes its health gives a `moved` with the new health, then the change.
      const last = held.get(event.uuid)
      const unknownPrevious =
        last !== undefined && last.state !== previous && !(last.time === event.time && last.before === previous)
      if (!trueInWindow || unknownPrevious) {
        falseHealth++
        disagree(
          "false-health",
          event.uuid,
          `${previous} to ${state} at ${new Date(event.time).toISOString()} while ${stateAt(health, event.time) ?? "not in the cluster"}` +
            (unknownPrevious ? `, last reported ${last.state}` : ""),
        )
      }
    }
    const last = held.get(event.uuid)
    const before = last === undefined ? undefined : last.time === event.time ? (last.before ?? last.state) : last.state
    held.set(event.uuid, { state, time: event.time, ...(before === undefined ? {} : { before }) })
  }

  const hidden = hiddenSpans(input.ledger)
  // A reading the exec faults spoil (garbage, a cut output, a hang) is taken again at the next resync, which
  // the ledger does not record: a process could see a state for sure only over two read periods of it.
  const seenBy = (stay: HealthStay, span: ServiceRunSpan) => overlapMs(stay, span) >= 2 * settleMs
  const reportable = (change: TrueChange, goneAt: number | undefined): boolean => {
    const from = change.to.from
    const settledAt = from + settleMs
    if (goneAt !== undefined && goneAt < settledAt) return false
    if ((hidden.get(change.uuid) ?? []).some((span) => span.from <= settledAt && span.to >= from)) return false
    // A durable store carries the state one process saw to the next; without one, a single process must see both.
    return input.keepsHealth
      ? input.runs.some((span) => seenBy(change.from, span)) && input.runs.some((span) => seenBy(change.to, span))
      : input.runs.some((span) => seenBy(change.from, span) && seenBy(change.to, span))
  }
  let trueChanges = 0
  let reported = 0
  let missed = 0
  let unreportable = 0
  for (const history of truth.gpus()) {
    for (const change of trueChangesOf(history.uuid, history.health, settleMs)) {
      trueChanges++
      const end = (change.to.to ?? Number.POSITIVE_INFINITY) + window
      const found = (reports.get(change.uuid) ?? []).some(
        (event) => event.health === change.to.state && event.time >= change.to.from - window && event.time <= end,
      )
      if (found) reported++
      else if (!reportable(change, history.goneAt)) unreportable++
      else {
        missed++
        disagree(
          "missed-health",
          change.uuid,
          `${change.from.state} to ${change.to.state} at ${new Date(change.to.from).toISOString()}`,
        )
      }
    }
  }

  let wrongAtEnd = 0
  for (const gpu of truth.whereNow().values()) {
    if (!gpu.readable) continue
    const now = healthOf(gpu.uuid).at(-1)?.state
    const last = held.get(gpu.uuid)?.state
    if (now === last) continue
    wrongAtEnd++
    disagree("wrong-health-at-end", gpu.uuid, `${now ?? "?"}, last reported ${last ?? "nothing"}`)
  }
  return {
    figures: {
      true_health_changes: trueChanges,
      health_reported: reported,
      missed_health: missed,
      unreportable_health: unreportable,
      false_health: falseHealth,
      wrong_health_at_end: wrongAtEnd,
    },
    disagreements,
  }
}
