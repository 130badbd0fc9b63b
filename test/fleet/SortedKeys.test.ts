import { describe, expect, it } from "vitest"
import { SortedKeys } from "../../src/fleet/SortedKeys.ts"

/** An index over keys its owner keeps, told of each change before the owner makes it. */
const indexed = () => {
  const owner = new Map<string, string>()
  const keys = new SortedKeys((id) => owner.get(id))
  const set = (id: string, key: string | undefined) => {
    if (owner.get(id) !== key) keys.changing(id, owner.get(id))
    if (key === undefined) owner.delete(id)
    else owner.set(id, key)
  }
  return { keys, set }
}

describe("SortedKeys", () => {
  it("finds ids by key prefix and exact key, in key then id order", () => {
    const { keys, set } = indexed()
    set("c", "node-b")
    set("a", "node-a")
    set("b", "node-ab")
    set("d", "node-a")
    expect(keys.prefix("node-a")).toEqual(["a", "d", "b"])
    expect(keys.exact("node-a")).toEqual(["a", "d"])
    expect(keys.prefix("")).toEqual(["a", "d", "b", "c"])
    expect(keys.prefix("x")).toEqual([])
    expect(keys.countPrefix("node-")).toBe(4)
  })

  it("follows changes of key and removals, few or many at once", () => {
    const { keys, set } = indexed()
    for (let i = 0; i < 1000; i++) set(`id-${i}`, `k-${String(i).padStart(4, "0")}`)
    expect(keys.prefix("k-000")).toHaveLength(10)
    set("id-5", "a-moved")
    set("id-6", undefined)
    expect(keys.exact("a-moved")).toEqual(["id-5"])
    expect(keys.prefix("k-000")).toEqual(["id-0", "id-1", "id-2", "id-3", "id-4", "id-7", "id-8", "id-9"])
    for (let i = 0; i < 500; i++) set(`id-${i}`, undefined)
    expect(keys.size).toBe(500)
    expect(keys.all()[0]).toBe("id-500")
    set("id-900", "k-0900")
    set("id-900", "z")
    set("id-900", "k-0900")
    expect(keys.exact("k-0900")).toEqual(["id-900"])
    expect(keys.all()).toHaveLength(500)
  })

  it("agrees with a plain sort after tens of thousands of changes with no read between them", () => {
    const { keys, set } = indexed()
    const model = new Map<string, string>()
    const change = (id: string, key: string | undefined) => {
      set(id, key)
      if (key === undefined) model.delete(id)
      else model.set(id, key)
    }
    // A fleet loaded, then many of its keys changed and some removed, all before the first read.
    for (let i = 0; i < 30_000; i++) change(`id-${i}`, `k-${(i * 7919) % 30_011}`)
    for (let i = 0; i < 30_000; i += 2) change(`id-${i}`, i % 10 === 0 ? undefined : `m-${(i * 31) % 977}`)
    for (let i = 30_000; i < 40_000; i++) change(`id-${i}`, `k-${i % 101}`)
    const expected = [...model]
      .sort(([a, x], [b, y]) => (x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0))
      .map(([id]) => id)
    expect(keys.all()).toEqual(expected)
    expect(keys.exact("m-0")).toEqual(expected.filter((id) => model.get(id) === "m-0"))
  })

  it("agrees with a plain sort after any mix of few and many changes", () => {
    const { keys, set } = indexed()
    const model = new Map<string, string>()
    let seed = 42
    const next = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return seed % below
    }
    for (let round = 0; round < 40; round++) {
      const changes = round % 3 === 0 ? 200 : next(20) + 1
      for (let change = 0; change < changes; change++) {
        const id = `id-${next(300)}`
        const key = next(5) === 0 ? undefined : `k-${next(50)}`
        set(id, key)
        if (key === undefined) model.delete(id)
        else model.set(id, key)
      }
      const expected = [...model]
        .sort(([a, x], [b, y]) => (x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0))
        .map(([id]) => id)
      expect(keys.all()).toEqual(expected)
      expect(keys.prefix("k-1")).toEqual(expected.filter((id) => model.get(id)?.startsWith("k-1")))
    }
  })
})
