import type { LedgerEntry, TrueHealthState } from "@gpu-serials/kube-sim"
import { describe, expect, it } from "vitest"
import type { EventKind, ExportedEvent } from "../../accuracy/ExportedEvent.ts"
import { type ComparisonInput, compareWithTruth } from "../../accuracy/TruthComparison.ts"

const second = 1_000
const t0 = Date.parse("2026-03-01T10:00:00.000Z")
const grace = 30 * second

type Fact = LedgerEntry extends infer E
  ? E extends LedgerEntry
    ? Omit<E, "seq" | "time" | "resourceVersion">
    : never
  : never

/** A ledger from facts at times (seconds after t0), stamped in order. */
const ledgerOf = (facts: ReadonlyArray<readonly [number, Fact]>): ReadonlyArray<LedgerEntry> =>
  facts.map(
    ([seconds, fact], index) =>
      ({
        seq: index + 1,
        time: new Date(t0 + seconds * second).toISOString(),
        resourceVersion: 1000 + index,
        ...fact,
      }) as LedgerEntry,
  )

const providerOf = (node: string) => `aws:///eu-west-1a/i-${node}`
const joined = (node: string): Fact => ({ entry: "node-joined", node, providerId: providerOf(node) })
const placed = (uuid: string, node: string, cause: "cluster-start" | "gpu-swap" = "cluster-start"): Fact => ({
  entry: "gpu-placed",
  uuid,
  serial: `serial-${uuid}`,
  node,
  providerId: providerOf(node),
  cause,
})

/** GPU x on node a, y on node b, from t0. */
const start: ReadonlyArray<readonly [number, Fact]> = [
  [0, joined("a")],
  [0, placed("x", "a")],
  [0, joined("b")],
  [0, placed("y", "b")],
]

/** An event exported by run `run`, recorded at `seconds` after t0 and arriving just after. */
const exported = (
  kind: EventKind,
  uuid: string,
  node: string,
  seconds: number,
  extra: {
    readonly previousNode?: string
    readonly run?: number
    readonly health?: TrueHealthState
    readonly previousHealthState?: TrueHealthState
  } = {},
): ExportedEvent => ({
  run: extra.run ?? 0,
  arrivedAt: t0 + seconds * second + 100,
  event: kind,
  uuid,
  node,
  providerId: providerOf(node),
  ...(extra.previousNode === undefined ? {} : { previousNode: extra.previousNode }),
  time: t0 + seconds * second,
  health: extra.health ?? "ok",
  ...(extra.previousHealthState === undefined ? {} : { previousHealthState: extra.previousHealthState }),
})

const startAdded = [exported("added", "x", "a", 1), exported("added", "y", "b", 1)]

const compare = (
  facts: ReadonlyArray<readonly [number, Fact]>,
  events: ReadonlyArray<ExportedEvent>,
  options: Partial<ComparisonInput> = {},
) =>
  compareWithTruth({
    ledger: ledgerOf(facts),
    events,
    runs: [{ startedAt: t0, stoppedAt: t0 + 1_000 * second }],
    durable: true,
    keepsGoneNodes: true,
    keepsHealth: true,
    keepsOneGpuPerIndex: false,
    removalGraceMs: grace,
    removalTickMs: 5 * second,
    readingWindowMs: 5 * second,
    churnStoppedAt: t0 + 200 * second,
    healthSettleMs: 10 * second,
    ...options,
  })

/** x and y swapped at 100 s. */
const swapped: ReadonlyArray<readonly [number, Fact]> = [
  ...start,
  [100, placed("x", "b", "gpu-swap")],
  [100, placed("y", "a", "gpu-swap")],
]
const swapReported = [
  exported("moved", "x", "b", 102, { previousNode: "a" }),
  exported("moved", "y", "a", 103, { previousNode: "b" }),
]

describe("comparing exported events with the ledger", () => {
  it("finds nothing wrong with a service that reported the fleet and a swap, and times its convergence", () => {
    const report = compare(swapped, [...startAdded, ...swapReported], { churnStoppedAt: t0 + 101 * second })
    expect(report).toMatchObject({
      gpus: 2,
      gpus_at_true_location: 2,
      wrong_location_at_end: 0,
      true_moves: 2,
      moved_reported: 2,
      missed_moves: 0,
      false_moved: 0,
      repeated_moved: 0,
      duplicate_added: 0,
      false_added: 0,
      false_removed: 0,
      missed_removed: 0,
      events: { added: 2, moved: 2, removed: 0, observed: 0 },
      disagreements: [],
    })
    // The last change (y moved) arrived 103.1 s after t0; churn stopped at 101 s.
    expect(report.converged_s).toBeCloseTo(2.1)
    expect(compare(swapped, [...startAdded, ...swapReported]).converged_s).toBe(0)
  })

  it("counts a swap not reported as missed moves and wrong locations, and does not call it converged", () => {
    const report = compare(swapped, startAdded)
    expect(report).toMatchObject({ true_moves: 2, moved_reported: 0, missed_moves: 2, wrong_location_at_end: 2 })
    expect(report.converged_s).toBeNull()
    expect(report.disagreements.map((disagreement) => disagreement.kind)).toEqual([
      "missed-move",
      "missed-move",
      "wrong-location-at-end",
      "wrong-location-at-end",
    ])
  })

  it("takes a GPU moved and moved back within the grace as no true move, and its reported moves as true ones", () => {
    const back: ReadonlyArray<readonly [number, Fact]> = [
      ...swapped,
      [110, placed("x", "a", "gpu-swap")],
      [110, placed("y", "b", "gpu-swap")],
    ]
    const seenBoth = [
      ...startAdded,
      ...swapReported,
      exported("moved", "x", "a", 112, { previousNode: "b" }),
      exported("moved", "y", "b", 112, { previousNode: "a" }),
    ]
    expect(compare(back, seenBoth)).toMatchObject({ true_moves: 0, false_moved: 0, wrong_location_at_end: 0 })
    expect(compare(back, startAdded)).toMatchObject({ true_moves: 0, missed_moves: 0, wrong_location_at_end: 0 })
  })

  it("counts a moved event to where the GPU never was, or from where it never was, as a false move", () => {
    const nowhere = compare(start, [...startAdded, exported("moved", "x", "b", 50, { previousNode: "a" })])
    expect(nowhere).toMatchObject({ false_moved: 1, true_moves: 0, wrong_location_at_end: 1 })
    const fromNowhere = compare(swapped, [
      ...startAdded,
      exported("moved", "x", "b", 102, { previousNode: "c" }),
      exported("moved", "y", "a", 102, { previousNode: "b" }),
    ])
    expect(fromNowhere).toMatchObject({ false_moved: 1, moved_reported: 2 })
  })

  it("takes a record as true when the GPU was there within the reading window before the record's time", () => {
    // x left a at 100 s; a reading of a recorded at 104 s may have been taken before (window 5 s), at 106 s not.
    const addedAt = (seconds: number) => compare(swapped, [exported("added", "x", "a", seconds)]).false_added
    expect(addedAt(104)).toBe(0)
    expect(addedAt(106)).toBe(1)
    const movedAt = (seconds: number) =>
      compare(
        [...swapped, [150, placed("x", "c", "gpu-swap")]],
        [...startAdded, exported("moved", "x", "b", seconds, { previousNode: "a" })],
      ).false_moved
    expect(movedAt(154)).toBe(0)
    expect(movedAt(156)).toBe(1)
  })

  it("counts a move reported twice as a repeated move", () => {
    const twice = compare(swapped, [
      ...startAdded,
      ...swapReported,
      exported("moved", "x", "b", 140, { previousNode: "a", run: 1 }),
    ])
    expect(twice).toMatchObject({ repeated_moved: 1, moved_reported: 2, false_moved: 0 })
  })

  it("counts added for a GPU already held as a duplicate across a restart with a durable store, not with memory", () => {
    const again = [
      ...startAdded,
      exported("added", "x", "a", 60, { run: 1 }),
      exported("added", "y", "b", 60, { run: 1 }),
    ]
    const runs = [
      { startedAt: t0, stoppedAt: t0 + 50 * second },
      { startedAt: t0 + 55 * second, stoppedAt: t0 + 1_000 * second },
    ]
    expect(compare(start, again, { runs }).duplicate_added).toBe(2)
    expect(compare(start, again, { runs, durable: false }).duplicate_added).toBe(0)
    expect(compare(start, [...startAdded, exported("added", "x", "a", 60)]).duplicate_added).toBe(1)
  })

  it("takes a move the memory store cannot see across a restart as unreportable", () => {
    const runs = [
      { startedAt: t0, stoppedAt: t0 + 95 * second },
      { startedAt: t0 + 101 * second, stoppedAt: t0 + 1_000 * second },
    ]
    const afterRestart = [
      ...startAdded,
      exported("added", "x", "b", 102, { run: 1 }),
      exported("added", "y", "a", 102, { run: 1 }),
    ]
    const report = compare(swapped, afterRestart, { runs, durable: false })
    expect(report).toMatchObject({ true_moves: 2, unreportable_moves: 2, missed_moves: 0, wrong_location_at_end: 0 })
    expect(compare(swapped, afterRestart, { runs })).toMatchObject({ missed_moves: 2, duplicate_added: 2 })
  })

  it("checks removals against the GPUs that left with their node", () => {
    const left: ReadonlyArray<readonly [number, Fact]> = [
      ...start,
      [100, { entry: "gpu-gone", uuid: "y", node: "b" }],
      [100, { entry: "node-left", node: "b" }],
    ]
    expect(compare(left, [...startAdded, exported("removed", "y", "b", 131)])).toMatchObject({
      gpus: 1,
      gpus_gone: 1,
      removed_reported: 1,
      missed_removed: 0,
      false_removed: 0,
      wrong_location_at_end: 0,
    })
    const missed = compare(left, startAdded)
    expect(missed).toMatchObject({ gpus_gone: 1, removed_reported: 0, missed_removed: 1, converged_s: null })
    const early = compare(start, [...startAdded, exported("removed", "y", "b", 131)])
    expect(early).toMatchObject({ false_removed: 1, wrong_location_at_end: 1 })
    expect(early.disagreements[0]?.detail).toContain("while on b")
  })

  it("excuses a removal a store that loses deleted nodes could not report, unless one process saw it through", () => {
    const left: ReadonlyArray<readonly [number, Fact]> = [
      ...start,
      [100, { entry: "gpu-gone", uuid: "y", node: "b" }],
      [100, { entry: "node-left", node: "b" }],
    ]
    const labels = { keepsGoneNodes: false }
    const restartedSoon = [
      { startedAt: t0, stoppedAt: t0 + 120 * second },
      { startedAt: t0 + 125 * second, stoppedAt: t0 + 1_000 * second },
    ]
    expect(compare(left, startAdded, { ...labels, runs: restartedSoon })).toMatchObject({
      gpus_gone: 1,
      missed_removed: 0,
      unreportable_removals: 1,
    })
    // A process that read from before the node left until its grace and a tick were over could report it.
    const restartedLate = [
      { startedAt: t0, stoppedAt: t0 + 135 * second },
      { startedAt: t0 + 140 * second, stoppedAt: t0 + 1_000 * second },
    ]
    expect(compare(left, startAdded, { ...labels, runs: restartedLate })).toMatchObject({
      missed_removed: 1,
      unreportable_removals: 0,
    })
    expect(compare(left, startAdded, { runs: restartedSoon })).toMatchObject({ missed_removed: 1 })
  })

  it("excuses added for a GPU whose node, deleted before the process started, took the store's record with it", () => {
    const movedThenLeft: ReadonlyArray<readonly [number, Fact]> = [
      ...swapped,
      [105, { entry: "gpu-gone", uuid: "y", node: "a" }],
      [105, { entry: "node-left", node: "a" }],
    ]
    const events = [...startAdded, exported("added", "x", "b", 112, { run: 1 })]
    const runs = [
      { startedAt: t0, stoppedAt: t0 + 95 * second },
      { startedAt: t0 + 110 * second, stoppedAt: t0 + 1_000 * second },
    ]
    expect(compare(movedThenLeft, events, { runs, keepsGoneNodes: false }).duplicate_added).toBe(0)
    expect(compare(movedThenLeft, events, { runs, keepsGoneNodes: true }).duplicate_added).toBe(1)
  })

  it("excuses added and the move for a GPU whose index a swap partner took in node labels before a restart", () => {
    // x and y swapped at 100 s; the first process read only node a (y there, x missing) before it stopped.
    const labelled = (event: ExportedEvent): ExportedEvent => ({ ...event, index: 0 })
    const events = [
      ...startAdded,
      exported("moved", "y", "a", 102, { previousNode: "b" }),
      exported("added", "x", "b", 112, { run: 1 }),
    ].map(labelled)
    const runs = [
      { startedAt: t0, stoppedAt: t0 + 105 * second },
      { startedAt: t0 + 110 * second, stoppedAt: t0 + 1_000 * second },
    ]
    const labels = { runs, keepsGoneNodes: false, keepsHealth: false, keepsOneGpuPerIndex: true }
    expect(compare(swapped, events, labels)).toMatchObject({
      true_moves: 2,
      moved_reported: 1,
      missed_moves: 0,
      unreportable_moves: 1,
      duplicate_added: 0,
      wrong_location_at_end: 0,
    })
    // A store keeping every GPU by UUID had x, so its added is a duplicate and the move was missed.
    expect(compare(swapped, events, { ...labels, keepsOneGpuPerIndex: false })).toMatchObject({
      missed_moves: 1,
      unreportable_moves: 0,
      duplicate_added: 1,
    })
    // GPUs at different indexes share the labels of a node.
    const apart = events.map((event) => (event.uuid === "x" ? { ...event, index: 1 } : event))
    expect(compare(swapped, apart, labels)).toMatchObject({ missed_moves: 1, duplicate_added: 1 })
  })

  it("counts added where the GPU is not as a false added", () => {
    expect(compare(start, [exported("added", "x", "b", 1), exported("added", "y", "b", 1)])).toMatchObject({
      false_added: 1,
      wrong_location_at_end: 1,
    })
  })

  it("leaves out GPUs a broken driver hides, as no reading can show them", () => {
    const hidden: ReadonlyArray<readonly [number, Fact]> = [
      ...start,
      [0, { entry: "driver-failed", node: "b", failure: "driver-not-loaded", unreadable: ["y"] }],
    ]
    expect(compare(hidden, [exported("added", "x", "a", 1)])).toMatchObject({
      gpus: 1,
      unreadable_gpus: 1,
      wrong_location_at_end: 0,
      converged_s: 0,
    })
    const repaired = compare(
      [...hidden, [50, { entry: "driver-repaired", node: "b" }]],
      [exported("added", "x", "a", 1)],
    )
    expect(repaired).toMatchObject({ gpus: 2, unreadable_gpus: 0, wrong_location_at_end: 1 })
  })

  it("counts a move to another machine under the same node name", () => {
    const rebuilt: ReadonlyArray<readonly [number, Fact]> = [
      ...start,
      [100, { ...placed("x", "a", "gpu-swap"), providerId: "aws:///eu-west-1a/i-new" } as Fact],
    ]
    const moved: ExportedEvent = {
      ...exported("moved", "x", "a", 102, { previousNode: "a" }),
      providerId: "aws:///eu-west-1a/i-new",
    }
    expect(compare(rebuilt, [...startAdded, moved])).toMatchObject({ true_moves: 1, moved_reported: 1, false_moved: 0 })
    expect(compare(rebuilt, startAdded)).toMatchObject({ missed_moves: 1, wrong_location_at_end: 1 })
  })
})

const health = (uuid: string, node: string, from: TrueHealthState, to: TrueHealthState): Fact => ({
  entry: "gpu-health",
  uuid,
  node,
  from,
  to,
})

/** x turns degraded at 50 s and is reset to ok at 120 s. */
const degradedAndReset: ReadonlyArray<readonly [number, Fact]> = [
  ...start,
  [50, health("x", "a", "ok", "degraded")],
  [120, health("x", "a", "degraded", "ok")],
]

const healthReported = (uuid: string, node: string, seconds: number, from: TrueHealthState, to: TrueHealthState) =>
  exported("health", uuid, node, seconds, { health: to, previousHealthState: from })

describe("comparing reported health with the ledger", () => {
  it("finds nothing wrong with a service that reported each change of a GPU's health", () => {
    const report = compare(degradedAndReset, [
      ...startAdded,
      healthReported("x", "a", 52, "ok", "degraded"),
      healthReported("x", "a", 121, "degraded", "ok"),
    ])
    expect(report).toMatchObject({
      true_health_changes: 2,
      health_reported: 2,
      missed_health: 0,
      unreportable_health: 0,
      false_health: 0,
      wrong_health_at_end: 0,
      events: { added: 2, health: 2 },
      disagreements: [],
    })
    expect(report.converged_s).not.toBeNull()
  })

  it("counts a change not reported as missed, and a GPU left in the wrong state as not converged", () => {
    const report = compare(degradedAndReset.slice(0, -1), startAdded)
    expect(report).toMatchObject({
      true_health_changes: 1,
      health_reported: 0,
      missed_health: 1,
      wrong_health_at_end: 1,
    })
    expect(report.converged_s).toBeNull()
    expect(report.disagreements.map((disagreement) => disagreement.kind)).toEqual([
      "missed-health",
      "wrong-health-at-end",
    ])
  })

  it("calls a reported state the GPU was not in, or a change from a state never reported, false", () => {
    const report = compare(degradedAndReset, [
      ...startAdded,
      healthReported("x", "a", 52, "ok", "failed"),
      healthReported("x", "a", 121, "degraded", "ok"),
      healthReported("y", "b", 60, "degraded", "ok"),
    ])
    expect(report).toMatchObject({ false_health: 3, missed_health: 1, health_reported: 1 })
  })

  it("takes a move and a health change of one reading, a moved with the new health then the change, as true", () => {
    const movedAndReset: ReadonlyArray<readonly [number, Fact]> = [
      ...start,
      [50, health("x", "a", "ok", "degraded")],
      [120, health("x", "a", "degraded", "ok")],
      [121, placed("x", "b", "gpu-swap")],
    ]
    const report = compare(movedAndReset, [
      ...startAdded,
      healthReported("x", "a", 52, "ok", "degraded"),
      exported("moved", "x", "b", 125, { previousNode: "a" }),
      healthReported("x", "b", 125, "degraded", "ok"),
    ])
    expect(report).toMatchObject({ true_health_changes: 2, health_reported: 2, false_health: 0, false_moved: 0 })
  })

  it("does not count a state shorter than a read of the fleet as a change, nor its report as false", () => {
    const flicker: ReadonlyArray<readonly [number, Fact]> = [
      ...start,
      [50, health("x", "a", "ok", "degraded")],
      [53, health("x", "a", "degraded", "ok")],
    ]
    expect(compare(flicker, startAdded)).toMatchObject({ true_health_changes: 0, missed_health: 0, false_health: 0 })
    const seen = compare(flicker, [
      ...startAdded,
      healthReported("x", "a", 51, "ok", "degraded"),
      healthReported("x", "a", 60, "degraded", "ok"),
    ])
    expect(seen).toMatchObject({ true_health_changes: 0, false_health: 0, wrong_health_at_end: 0 })
  })

  it("leaves out changes no reading could show: a GPU hidden by its driver, or a new process without the state before", () => {
    const hidden: ReadonlyArray<readonly [number, Fact]> = [
      ...start,
      [48, { entry: "driver-failed", node: "a", failure: "device-handle", unreadable: ["x"] }],
      [50, health("x", "a", "ok", "degraded")],
      [55, { entry: "driver-repaired", node: "a" }],
    ]
    expect(compare(hidden, startAdded)).toMatchObject({
      true_health_changes: 1,
      unreportable_health: 1,
      health_reported: 0,
      missed_health: 0,
      false_health: 0,
    })
    const restarted = compare(
      degradedAndReset.slice(0, -1),
      [
        ...startAdded,
        exported("added", "x", "a", 52, { run: 1, health: "degraded" }),
        exported("added", "y", "b", 52, { run: 1 }),
      ],
      {
        durable: false,
        keepsHealth: false,
        runs: [
          { startedAt: t0, stoppedAt: t0 + 49 * second },
          { startedAt: t0 + 51 * second, stoppedAt: t0 + 1_000 * second },
        ],
      },
    )
    expect(restarted).toMatchObject({
      true_health_changes: 1,
      unreportable_health: 1,
      missed_health: 0,
      wrong_health_at_end: 0,
    })
    // With a durable store: degraded from 50 s to 120 s while no process ran shows neither change.
    const unseen = compare(degradedAndReset, startAdded, {
      runs: [
        { startedAt: t0, stoppedAt: t0 + 45 * second },
        { startedAt: t0 + 125 * second, stoppedAt: t0 + 1_000 * second },
      ],
    })
    expect(unseen).toMatchObject({ true_health_changes: 2, unreportable_health: 2, missed_health: 0, false_health: 0 })
  })
})
