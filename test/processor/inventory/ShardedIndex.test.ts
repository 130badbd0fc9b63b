import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ShardedIndex } from "../../../src/processor/inventory/ShardedIndex.ts"

type Change = readonly ["set", string, number] | readonly ["delete", string]

const keyArb = fc.oneof(fc.constantFrom("gpu-node-a", "gpu-node-b", ""), fc.string({ maxLength: 12 }))
const changeArb: fc.Arbitrary<Change> = fc.oneof(
  fc.tuple(fc.constant("set" as const), keyArb, fc.integer()),
  fc.tuple(fc.constant("delete" as const), keyArb),
)
/** Edits of up to 40 changes each, on an index that starts with up to 300 keys. */
const historyArb = fc.record({
  start: fc.array(fc.tuple(fc.string({ maxLength: 12 }), fc.integer()), { maxLength: 300 }),
  edits: fc.array(fc.array(changeArb, { maxLength: 40 }), { maxLength: 8 }),
})

const contents = (index: ReadonlyMap<string, number>) => new Map([...index].sort(([a], [b]) => (a < b ? -1 : 1)))

describe("ShardedIndex", () => {
  it("holds what a native Map holds after the same changes, and every earlier version stays as it was", () => {
    fc.assert(
      fc.property(historyArb, ({ start, edits }) => {
        const model = new Map(start)
        let index = ShardedIndex.of(start)
        const versions: Array<{ index: ShardedIndex<number>; expected: Map<string, number> }> = []
        for (const changes of edits) {
          versions.push({ index, expected: contents(model) })
          const edit = index.edit()
          for (const change of changes) {
            if (change[0] === "set") {
              edit.set(change[1], change[2])
              model.set(change[1], change[2])
            } else {
              edit.delete(change[1])
              model.delete(change[1])
            }
            expect(edit.get(change[1])).toBe(model.get(change[1]))
          }
          index = edit.done()
          expect(index.size).toBe(model.size)
          for (const [key, value] of model) {
            expect(index.get(key)).toBe(value)
            expect(index.has(key)).toBe(true)
          }
          expect(contents(index)).toEqual(contents(model))
        }
        for (const { index: earlier, expected } of versions) {
          expect(earlier.size).toBe(expected.size)
          expect(contents(earlier)).toEqual(expected)
        }
      }),
      { numRuns: 200 },
    )
  })

  it("lets go of the shards its removed keys emptied, so keys that come and go leave nothing behind", () => {
    const heldShards = (index: ShardedIndex<number>): number => {
      const { root } = index as unknown as {
        root: ReadonlyArray<ReadonlyArray<Map<string, number> | undefined> | undefined>
      }
      return root.reduce((held, branch) => held + (branch?.filter((shard) => shard !== undefined).length ?? 0), 0)
    }
    let index = ShardedIndex.empty<number>()
    for (let round = 0; round < 20; round++) {
      const added = index.edit()
      for (let at = 0; at < 500; at++) added.set(`node-${round}-${at}`, at)
      index = added.done()
      const removed = index.edit()
      for (let at = 0; at < 500; at++) removed.delete(`node-${round}-${at}`)
      index = removed.done()
    }
    expect(index.size).toBe(0)
    expect(heldShards(index)).toBe(0)
    const kept = index.edit()
    kept.set("gpu-node-a", 1)
    expect(heldShards(kept.done())).toBe(1)
  })

  it("answers for absent keys without holding them", () => {
    const index = ShardedIndex.of([["gpu-node-a", 1]])
    expect(index.get("gpu-node-b")).toBeUndefined()
    expect(index.has("gpu-node-b")).toBe(false)
    const edit = index.edit()
    edit.delete("gpu-node-b")
    expect(edit.done().size).toBe(1)
    expect([...ShardedIndex.empty<number>().keys()]).toEqual([])
  })
})
