import { CrossClusterTruth, type LedgerEntry } from "@gpu-serials/kube-sim"
import { describe, expect, it } from "vitest"
import { compareCrossClusterMoves } from "../../accuracy/CrossClusterComparison.ts"
import type { ExportedEvent } from "../../accuracy/ExportedEvent.ts"

const second = 1_000
const t0 = Date.parse("2026-03-01T10:00:00.000Z")
const settle = 10 * second

const at = (seconds: number) => new Date(t0 + seconds * second).toISOString()
const providerOf = (node: string) => `aws:///eu-west-1a/i-${node}`

const stamped = (entries: ReadonlyArray<Record<string, unknown>>): ReadonlyArray<LedgerEntry> =>
  entries.map((entry, index) => ({ seq: index + 1, resourceVersion: 1000 + index, ...entry }) as LedgerEntry)

const placed = (uuid: string, node: string) => ({
  time: at(0),
  entry: "gpu-placed",
  uuid,
  serial: `serial-${uuid}`,
  node,
  providerId: providerOf(node),
  cause: "cluster-start",
})

/** Board `uuid` leaves `from`'s node for `to`'s node at `seconds`, as both ledgers record it. */
const swap = (swapNumber: number, uuid: string, seconds: number, from: [string, string], to: [string, string]) => ({
  departed: {
    time: at(seconds),
    entry: "gpu-departed",
    uuid,
    serial: `serial-${uuid}`,
    node: from[1],
    providerId: providerOf(from[1]),
    swap: swapNumber,
    toCluster: to[0],
    toNode: to[1],
    toProviderId: providerOf(to[1]),
  },
  arrived: {
    time: at(seconds),
    entry: "gpu-arrived",
    uuid,
    serial: `serial-${uuid}`,
    node: to[1],
    providerId: providerOf(to[1]),
    swap: swapNumber,
    fromCluster: from[0],
    fromNode: from[1],
    fromProviderId: providerOf(from[1]),
    health: "ok",
  },
})

/** A hub's `moved` of `uuid` to `to` from `from`, read at `seconds`. */
const moved = (uuid: string, seconds: number, from: [string, string], to: [string, string]): ExportedEvent => ({
  run: 0,
  arrivedAt: t0 + seconds * second + 100,
  event: "moved",
  uuid,
  cluster: to[0],
  node: to[1],
  providerId: providerOf(to[1]),
  previousCluster: from[0],
  previousNode: from[1],
  time: t0 + seconds * second,
})

const east: [string, string] = ["east", "e1"]
const west: [string, string] = ["west", "w1"]

/** x starts in east and y in west; at 60 s they trade places. */
const traded = () => {
  const x = swap(1, "x", 60, east, west)
  const y = swap(1, "y", 60, west, east)
  return CrossClusterTruth.of([
    { cluster: "east", entries: stamped([placed("x", "e1"), x.departed, y.arrived]) },
    { cluster: "west", entries: stamped([placed("y", "w1"), y.departed, x.arrived]) },
  ])
}

const compare = (truth: CrossClusterTruth, events: ReadonlyArray<ExportedEvent>, endedAt = t0 + 120 * second) =>
  compareCrossClusterMoves({ truth, events, settleMs: settle, readingWindowMs: 2 * second, endedAt })

describe("a hub's cross-cluster moves against the clusters' ledgers", () => {
  it("counts a swap between clusters reported as two moved records as two reported moves", () => {
    const report = compare(traded(), [moved("x", 62, east, west), moved("y", 63, west, east)])
    expect(report).toMatchObject({
      clusters: 2,
      true_cross_cluster_moves: 2,
      cross_cluster_reported: 2,
      missed_cross_cluster: 0,
      unreportable_cross_cluster: 0,
      false_cross_cluster: 0,
      repeated_cross_cluster: 0,
    })
  })

  it("names a move the hub never reported as missed, and one reported twice as repeated", () => {
    const report = compare(traded(), [moved("x", 62, east, west), moved("x", 70, east, west)])
    expect(report).toMatchObject({ cross_cluster_reported: 1, missed_cross_cluster: 1, repeated_cross_cluster: 1 })
    expect(report.disagreements.map((found) => [found.kind, found.uuid])).toEqual([
      ["repeated-cross-cluster", "x"],
      ["missed-cross-cluster", "y"],
    ])
  })

  it("names as false a moved from a cluster the GPU never left, and one read before the move", () => {
    const report = compare(traded(), [moved("x", 62, west, east), moved("y", 30, west, east)])
    expect(report).toMatchObject({ false_cross_cluster: 2, cross_cluster_reported: 0, missed_cross_cluster: 2 })
  })

  it("leaves a move too close to the end for any reading unreportable, not missed", () => {
    const report = compare(traded(), [], t0 + 65 * second)
    expect(report).toMatchObject({
      true_cross_cluster_moves: 2,
      unreportable_cross_cluster: 2,
      missed_cross_cluster: 0,
    })
  })

  it("ignores moved records within one cluster", () => {
    const within: ExportedEvent = { ...moved("x", 30, east, ["east", "e2"]), previousCluster: "east" }
    const report = compare(traded(), [within, moved("x", 62, east, west), moved("y", 63, west, east)])
    expect(report).toMatchObject({ false_cross_cluster: 0, cross_cluster_reported: 2 })
  })
})
