import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { remove, upsert } from "../../src/domain/InventoryChange.ts"
import type { KnownGpu } from "../../src/domain/KnownGpu.ts"
import { findGpus, type GpuQuery, parseGpuQuery } from "../../src/fleet/FleetQuery.ts"
import { compareOrder, FleetView, orderKey, uuidKey, uuidKeyStartsWith } from "../../src/fleet/FleetView.ts"
import { eventOf, knownGpu, t0 } from "./FleetFixtures.ts"

const uuidOf = (at: number): string => `GPU-${String(at).padStart(8, "0")}-1111-2222-3333-444444444444`
const minutes = (count: number): Date => new Date(t0.getTime() + count * 60_000)

describe("FleetView's history of what this process saw", () => {
  it("keeps at most historyEntries entries in all, forgetting the GPUs heard of longest ago, whatever the churn", () => {
    const view = new FleetView({ eventCapacity: 0, historyPerGpu: 5, historyEntries: 10 }, t0)
    // A churning fleet: every GPU arrives once and leaves; new UUIDs keep coming.
    for (let at = 0; at < 100; at++) {
      const known = knownGpu({ uuid: uuidOf(at), node: `node-${at}`, index: 0 })
      view.record([eventOf(known, "added", minutes(at)), eventOf(known, "removed", minutes(at))])
    }
    const kept = Array.from({ length: 100 }, (_, at) => view.history(uuidOf(at))?.entries.length ?? 0)
    expect(kept.reduce((sum, entries) => sum + entries, 0)).toBeLessThanOrEqual(10)
    expect(kept.slice(95)).toEqual([2, 2, 2, 2, 2])
    expect(view.history(uuidOf(0))).toBeUndefined()
  })

  it("keeps the GPU just heard of even when its own entries reach the bound", () => {
    const view = new FleetView({ eventCapacity: 0, historyPerGpu: 20, historyEntries: 4 }, t0)
    const known = knownGpu({ uuid: uuidOf(1), node: "node-1", index: 0 })
    for (let at = 0; at < 6; at++) view.record([eventOf(known, at === 0 ? "added" : "moved", minutes(at))])
    expect(view.history(uuidOf(1))?.entries).toHaveLength(6)
  })

  it("keeps historyPerGpu entries of a GPU, newest first, and says the older were dropped", () => {
    const view = new FleetView({ eventCapacity: 0, historyPerGpu: 3 }, t0)
    const known = knownGpu({ uuid: uuidOf(1), node: "node-1", index: 0 })
    view.record([eventOf(known, "added", minutes(0))])
    expect(view.history(uuidOf(1))).toEqual({
      entries: [expect.objectContaining({ event: "added", time: minutes(0).toISOString() })],
      dropped: false,
    })
    for (let at = 1; at <= 4; at++) view.record([eventOf({ ...known, node: `node-${at + 1}` }, "moved", minutes(at))])
    const kept = view.history(uuidOf(1))
    expect(kept?.dropped).toBe(true)
    expect(kept?.entries.map((entry) => [entry.event, entry.node])).toEqual([
      ["moved", "node-5"],
      ["moved", "node-4"],
      ["moved", "node-3"],
    ])
    // A GPU forgotten for the bound on GPUs and heard of again starts a history of its own, nothing dropped.
    const few = new FleetView({ eventCapacity: 0, historyPerGpu: 1, historyGpus: 1 }, t0)
    few.record([eventOf(known, "added", minutes(0)), eventOf(known, "moved", minutes(1))])
    expect(few.history(uuidOf(1))?.dropped).toBe(true)
    const other = knownGpu({ uuid: uuidOf(2), node: "node-2", index: 0 })
    few.record([eventOf(other, "added", minutes(2)), eventOf(known, "moved", minutes(3))])
    expect(few.history(uuidOf(2))).toBeUndefined()
    expect(few.history(uuidOf(1))).toEqual({ entries: [expect.objectContaining({ event: "moved" })], dropped: false })
  })
})

describe("FleetView's lower-cased names of nodes, chassis and products", () => {
  it("forgets a node's name with its last GPU, so a churning fleet's new node names do not pile up", () => {
    const view = new FleetView({ eventCapacity: 0 }, t0)
    const steady = knownGpu({ uuid: uuidOf(0), node: "Steady-Node", index: 0, chassis: "CHASSIS-1" })
    view.apply([upsert(steady)])
    // Nodes join with new names and leave, as an autoscaled pool does; one GPU moves on the way.
    for (let at = 1; at <= 500; at++) {
      const joined = knownGpu({ uuid: uuidOf(at), node: `Node-${at}`, index: 0, product: `Model ${at % 7}` })
      view.apply([upsert(joined)])
      if (at % 2 === 0) view.apply([upsert({ ...joined, node: `Moved-${at}` })])
      view.apply([remove(at % 2 === 0 ? { ...joined, node: `Moved-${at}` } : joined)])
    }
    // The steady GPU's node, chassis and product names only.
    expect(view.sharedNames).toBe(3)
    const byNode = parseGpuQuery(new URLSearchParams("node=steady-node")) as GpuQuery
    expect(findGpus(view, byNode).items.map((entry) => entry.known.uuid)).toEqual([uuidOf(0)])
  })
})

describe("FleetView's list order and UUID keys, worked out from the entry instead of kept", () => {
  const names = fc.constantFrom("n", "n-1", "n-10", "n1", "N-1", "n-1a", "gpu-node-0123", "ä-node", "")
  const uuids = fc.constantFrom(
    "GPU-0a1b2c3d-0000-4000-8000-000000000000",
    "GPU-0A1B2C3D-0000-4000-8000-000000000000",
    "gpu-0a1b2c3d-0000-4000-8000-000000000001",
    "0a1b2c3d",
    "GPU-Ä1b2",
    "GPU-",
    "MIG-1",
  )
  const gpus = fc.record({
    node: names,
    index: fc.oneof(fc.integer({ min: 0, max: 20 }), fc.constantFrom(999_999, 1_000_000, 12_345_678)),
    uuid: uuids,
  })

  it("compares two GPUs as their list-order keys compare", () => {
    fc.assert(
      fc.property(gpus, gpus, (a, b) => {
        const [left, right] = [knownGpu(a), knownGpu(b)]
        const byKeys = Math.sign(orderKey(left) < orderKey(right) ? -1 : orderKey(left) > orderKey(right) ? 1 : 0)
        expect(Math.sign(compareOrder(left, right))).toBe(byKeys)
      }),
    )
  })

  it("tells whether a UUID's key starts with a prefix as the key itself would", () => {
    fc.assert(
      fc.property(
        uuids,
        fc.constantFrom("", "0a1b", "0a1b2c3d-", "0a1b2c3d-0000-4000-8000-000000000000x", "ä1", "gpu-", "mig-1"),
        (uuid, prefix) => {
          expect(uuidKeyStartsWith(uuid, prefix)).toBe(uuidKey(uuid).startsWith(prefix))
        },
      ),
    )
  })

  it("pages a list across nodes whose names start alike, in the keys' order, its cursor past the page's last", () => {
    const view = new FleetView({ eventCapacity: 0 }, t0)
    const placed = [
      knownGpu({ uuid: uuidOf(1), node: "n-1", index: 10 }),
      knownGpu({ uuid: uuidOf(2), node: "n-1", index: 2 }),
      knownGpu({ uuid: uuidOf(3), node: "n", index: 0 }),
      knownGpu({ uuid: uuidOf(4), node: "n-10", index: 0 }),
      knownGpu({ uuid: uuidOf(5), node: "n-1a", index: 1 }),
    ]
    view.apply(placed.map(upsert))
    const expected = placed.toSorted((a, b) => (orderKey(a) < orderKey(b) ? -1 : 1)).map((known) => known.uuid)
    const first = findGpus(view, parseGpuQuery(new URLSearchParams("limit=3")) as GpuQuery)
    const rest = findGpus(view, parseGpuQuery(new URLSearchParams(`limit=3&cursor=${first.nextCursor}`)) as GpuQuery)
    expect([...first.items, ...rest.items].map((entry) => entry.known.uuid)).toEqual(expected)
    // A filter that walks the candidates sorts them the same way.
    const byQ = findGpus(view, parseGpuQuery(new URLSearchParams("q=n")) as GpuQuery)
    expect(byQ.items.map((entry) => entry.known.uuid)).toEqual(expected)
    // A GPU whose index changes on its node moves in the list.
    view.apply([upsert({ ...placed[1], gpu: { ...placed[1].gpu, index: 11 } } as KnownGpu)])
    expect(view.orderedGpus().map((entry) => entry.known.uuid)).toEqual([
      uuidOf(3),
      uuidOf(1),
      uuidOf(2),
      uuidOf(4),
      uuidOf(5),
    ])
  })
})
