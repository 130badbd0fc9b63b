import { describe, expect, it } from "vitest"
import {
  followedBy,
  type InventoryChange,
  mergeChanges,
  remove,
  upsert,
  upsertFrom,
} from "../../src/domain/InventoryChange.ts"
import { knownGpu } from "../fleet/FleetFixtures.ts"

const on = (node: string) => knownGpu({ uuid: "GPU-aaaa0001", node, index: 0 })

/** What a change says of its GPU's nodes: where it is now, and the node it leaves. */
const places = (change: InventoryChange) =>
  change._tag === "Upsert" ? { now: change.gpu.node, leaves: change.from } : { now: undefined, leaves: change.node }

describe("InventoryChange", () => {
  it("names the node a GPU left only when it came from another one", () => {
    expect(places(upsertFrom(on("node-b"), "node-a"))).toEqual({ now: "node-b", leaves: "node-a" })
    expect(upsertFrom(on("node-a"), "node-a")).toEqual(upsert(on("node-a")))
    expect(upsert(on("node-a"))).not.toHaveProperty("from")
  })

  it("merges two changes of a GPU into one that leaves the node the reader had it on before the first", () => {
    // Moved a → b, then re-affirmed on b: the reader that took neither still has it on a.
    expect(places(followedBy(upsertFrom(on("node-b"), "node-a"), upsert(on("node-b"))))).toEqual({
      now: "node-b",
      leaves: "node-a",
    })
    // Moved a → b → c: it leaves a.
    expect(places(followedBy(upsertFrom(on("node-b"), "node-a"), upsertFrom(on("node-c"), "node-b")))).toEqual({
      now: "node-c",
      leaves: "node-a",
    })
    // Moved a → b and back: nothing to leave.
    expect(followedBy(upsertFrom(on("node-b"), "node-a"), upsertFrom(on("node-a"), "node-b"))).toEqual(
      upsert(on("node-a")),
    )
    // Moved a → b, then removed from b: the reader drops it from a.
    expect(places(followedBy(upsertFrom(on("node-b"), "node-a"), remove(on("node-b"))))).toEqual({
      now: undefined,
      leaves: "node-a",
    })
    // Removed from a, then read on c: it leaves a.
    expect(places(followedBy(remove(on("node-a")), upsert(on("node-c"))))).toEqual({
      now: "node-c",
      leaves: "node-a",
    })
    expect(followedBy(undefined, upsert(on("node-a")))).toEqual(upsert(on("node-a")))
  })

  it("keeps one change per UUID, in the order GPUs last changed", () => {
    const other = knownGpu({ uuid: "GPU-bbbb0001", node: "node-a", index: 1 })
    const merged = mergeChanges(new Map([["GPU-aaaa0001", upsert(on("node-a"))]]), [
      upsert(other),
      upsertFrom(on("node-b"), "node-a"),
    ])
    expect([...merged.keys()]).toEqual(["GPU-bbbb0001", "GPU-aaaa0001"])
    expect(places(merged.get("GPU-aaaa0001") as InventoryChange)).toEqual({ now: "node-b", leaves: "node-a" })
  })
})
