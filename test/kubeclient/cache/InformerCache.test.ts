import { describe, expect, it } from "vitest"
import { InformerCache } from "../../../src/kubeclient/cache/InformerCache.ts"

interface Item {
  readonly key: string
  readonly resourceVersion: string
  readonly value: string
}

const item = (key: string, resourceVersion: string, value = key): Item => ({ key, resourceVersion, value })

describe("InformerCache", () => {
  it("turns watch events into added, updated and deleted changes", () => {
    const cache = new InformerCache<Item>()
    expect(cache.upsert(item("a", "1"))?._tag).toBe("Added")
    expect(cache.upsert(item("a", "2", "changed"))).toEqual({
      _tag: "Updated",
      previous: item("a", "1"),
      object: item("a", "2", "changed"),
    })
    expect(cache.remove(item("a", "3"))).toEqual({ _tag: "Deleted", object: item("a", "3") })
    expect(cache.size).toBe(0)
  })

  it("sees no change in an object seen again at the same resourceVersion, or in deleting an unknown one", () => {
    const cache = new InformerCache<Item>()
    cache.upsert(item("a", "1"))
    expect(cache.upsert(item("a", "1"))).toBeUndefined()
    expect(cache.remove(item("b", "2"))).toBeUndefined()
  })

  it("a relist adds the new, updates the changed and deletes what is gone", () => {
    const cache = new InformerCache<Item>()
    cache.upsert(item("kept", "1"))
    cache.upsert(item("changed", "1"))
    cache.upsert(item("gone", "1"))
    const changes = cache.replace([item("kept", "1"), item("changed", "5"), item("new", "6")])
    expect(changes.map((change) => [change._tag, change.object.key])).toEqual([
      ["Updated", "changed"],
      ["Added", "new"],
      ["Deleted", "gone"],
    ])
    expect([...cache.values()].map((cached) => cached.key).sort()).toEqual(["changed", "kept", "new"])
    expect(cache.get("changed")?.resourceVersion).toBe("5")
  })

  it("a list taken page by page gives each page's changes as it comes, and the deletions at its end", () => {
    const cache = new InformerCache<Item>()
    cache.upsert(item("left over", "1"))
    const seen = new Set<string>()
    expect(cache.upsertListed([item("a", "2"), item("left over", "1")], seen).map((change) => change._tag)).toEqual([
      "Added",
    ])
    expect(cache.upsertListed([item("b", "3")], seen).map((change) => [change._tag, change.object.key])).toEqual([
      ["Added", "b"],
    ])
    expect(cache.removeUnlisted(seen)).toEqual([])
    expect(cache.removeUnlisted(new Set(["a"])).map((change) => [change._tag, change.object.key])).toEqual([
      ["Deleted", "left over"],
      ["Deleted", "b"],
    ])
    expect([...cache.values()].map((cached) => cached.key)).toEqual(["a"])
  })
})
