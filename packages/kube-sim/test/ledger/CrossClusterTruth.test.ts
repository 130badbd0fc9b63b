import { describe, expect, it } from "vitest"
import { CrossClusterTruth } from "../../src/ledger/CrossClusterTruth.ts"
import type { LedgerEntry } from "../../src/ledger/LedgerEntry.ts"
import { parseLedger } from "../../src/ledger/LedgerJsonl.ts"

describe("the truth of moves between clusters", () => {
  const stamp = (seq: number, time: number) => ({
    seq,
    time: new Date(time).toISOString(),
    resourceVersion: 1000 + seq,
  })
  const placed = (seq: number, time: number, uuid: string, node: string): LedgerEntry => ({
    ...stamp(seq, time),
    entry: "gpu-placed",
    uuid,
    serial: `serial-${uuid}`,
    node,
    providerId: `provider-${node}`,
    cause: "cluster-start",
  })
  const departed = (seq: number, time: number, uuid: string, node: string, to: string, swap: number): LedgerEntry => ({
    ...stamp(seq, time),
    entry: "gpu-departed",
    uuid,
    serial: `serial-${uuid}`,
    node,
    providerId: `provider-${node}`,
    swap,
    toCluster: to,
    toNode: "n",
    toProviderId: "provider-n",
  })
  const arrived = (seq: number, time: number, uuid: string, from: string, swap: number): LedgerEntry => ({
    ...stamp(seq, time),
    entry: "gpu-arrived",
    uuid,
    serial: `serial-${uuid}`,
    node: "n",
    providerId: "provider-n",
    swap,
    fromCluster: from,
    fromNode: "m",
    fromProviderId: "provider-m",
    health: "degraded",
  })

  it("pairs each departure with its arrival, lists an end without its other, and follows a board back", () => {
    const truth = CrossClusterTruth.of([
      {
        cluster: "a",
        entries: [
          placed(1, 0, "x", "m"),
          placed(2, 0, "y", "m"),
          departed(3, 100, "x", "m", "b", 1),
          departed(4, 200, "y", "m", "b", 2),
          arrived(5, 300, "x", "b", 3),
        ],
      },
      { cluster: "b", entries: [arrived(1, 100, "x", "a", 1), departed(2, 300, "x", "n", "a", 3)] },
    ])
    expect(truth.moves().map((move) => [move.uuid, move.swap, move.from.cluster, move.to.cluster, move.time])).toEqual([
      ["x", 1, "a", "b", 100],
      ["x", 3, "b", "a", 300],
    ])
    expect(truth.unmatched()).toEqual([
      expect.objectContaining({ cluster: "a", entry: expect.objectContaining({ uuid: "y" }) }),
    ])
    expect(truth.history("x")?.stays.map((stay) => [stay.cluster, stay.from, stay.to])).toEqual([
      ["a", 0, 100],
      ["b", 100, 300],
      ["a", 300, undefined],
    ])
    expect(truth.whereNow().get("x")).toMatchObject({ cluster: "a", node: "n" })
    expect(truth.whereNow().has("y")).toBe(false)
    // Back in a, it is in the cluster again, in the health it came back with.
    expect(truth.cluster("a")?.history("x")?.goneAt).toBeUndefined()
    expect(
      truth
        .cluster("a")
        ?.history("x")
        ?.health.map((stay) => stay.state),
    ).toEqual(["ok", "degraded"])
    expect(
      truth
        .cluster("b")
        ?.history("x")
        ?.health.map((stay) => stay.state),
    ).toEqual(["degraded"])
  })

  it("orders the stays of a board that left and came back within one millisecond", () => {
    const truth = CrossClusterTruth.of([
      { cluster: "b", entries: [arrived(1, 100, "x", "a", 1), departed(2, 100, "x", "n", "a", 2)] },
      {
        cluster: "a",
        entries: [placed(1, 0, "x", "m"), departed(2, 100, "x", "m", "b", 1), arrived(3, 100, "x", "b", 2)],
      },
    ])
    expect(truth.moves().map((move) => move.swap)).toEqual([1, 2])
    expect(truth.history("x")?.stays.map((stay) => [stay.cluster, stay.from, stay.to])).toEqual([
      ["a", 0, 100],
      ["b", 100, 100],
      ["a", 100, undefined],
    ])
  })

  it("reads both ends from ledger lines and names a line missing the swap", () => {
    const line = JSON.stringify(departed(1, 0, "x", "m", "b", 4))
    expect(parseLedger(line)).toEqual([departed(1, 0, "x", "m", "b", 4)])
    expect(() => parseLedger(line.replace('"swap":4', '"swap":"4"'))).toThrow(
      "ledger line 1: gpu-departed needs swap as a number",
    )
    const arrival = JSON.stringify(arrived(1, 0, "x", "a", 4))
    expect(() => parseLedger(arrival.replace('"degraded"', '"sick"'))).toThrow(
      "gpu-arrived needs health among ok, degraded, failed",
    )
  })
})
