import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { WorkQueueState } from "../../../src/kubeclient/workqueue/WorkQueueState.ts"

type Step =
  | { readonly op: "add"; readonly key: number }
  | { readonly op: "get"; readonly worker: number }
  | { readonly op: "done"; readonly worker: number }

const steps: fc.Arbitrary<Array<Step>> = fc.array(
  fc.oneof(
    fc.record({ op: fc.constant("add" as const), key: fc.integer({ min: 0, max: 4 }) }),
    fc.record({ op: fc.constant("get" as const), worker: fc.integer({ min: 0, max: 3 }) }),
    fc.record({ op: fc.constant("done" as const), worker: fc.integer({ min: 0, max: 3 }) }),
  ),
  { maxLength: 200 },
)

describe("WorkQueueState (client-go workqueue contract)", () => {
  it("collapses duplicate keys", () => {
    const queue = new WorkQueueState<string>()
    expect(queue.add("a")).toBe(true)
    expect(queue.add("a")).toBe(false)
    expect(queue.add("b")).toBe(true)
    expect(queue.length).toBe(2)
    expect(queue.get()).toBe("a")
    expect(queue.get()).toBe("b")
    expect(queue.get()).toBeUndefined()
  })

  it("does not hand out a key being processed; a key added meanwhile is handed out again after done", () => {
    const queue = new WorkQueueState<string>()
    queue.add("a")
    expect(queue.get()).toBe("a")
    expect(queue.add("a")).toBe(false)
    expect(queue.length).toBe(0)
    expect(queue.get()).toBeUndefined()
    expect(queue.done("a")).toBe(true)
    expect(queue.get()).toBe("a")
    expect(queue.done("a")).toBe(false)
    expect(queue.get()).toBeUndefined()
  })

  it("ignores adds and hands out nothing after shutdown", () => {
    const queue = new WorkQueueState<string>()
    queue.add("a")
    queue.shutDown()
    expect(queue.add("b")).toBe(false)
    expect(queue.get()).toBeUndefined()
  })

  it("after drain ignores adds, still hands out what is queued or added meanwhile, then is drained", () => {
    const queue = new WorkQueueState<string>()
    queue.add("a")
    queue.add("b")
    expect(queue.get()).toBe("a")
    queue.add("a")
    queue.drain()
    expect(queue.add("c")).toBe(false)
    expect(queue.drained).toBe(false)
    expect(queue.get()).toBe("b")
    queue.done("b")
    expect(queue.done("a")).toBe(true)
    expect(queue.get()).toBe("a")
    expect(queue.drained).toBe(false)
    queue.done("a")
    expect(queue.get()).toBeUndefined()
    expect(queue.drained).toBe(true)
  })

  it("holds the contract over any interleaving of add, get and done by several workers", () => {
    fc.assert(
      fc.property(steps, (script) => {
        const queue = new WorkQueueState<number>()
        const held = new Map<number, number>()
        /** Keys added since they were last handed out: each must be handed out once more. */
        const pending = new Set<number>()
        const heldKeys = () => new Set(held.values())
        const check = () => {
          const waiting = [...pending].filter((key) => !heldKeys().has(key))
          expect(queue.length).toBe(waiting.length)
          expect(queue.processingCount).toBe(held.size)
        }
        for (const step of script) {
          if (step.op === "add") {
            queue.add(step.key)
            pending.add(step.key)
          } else if (step.op === "get") {
            if (held.has(step.worker)) continue
            const key = queue.get()
            if (key === undefined) {
              expect([...pending].every((candidate) => heldKeys().has(candidate))).toBe(true)
              continue
            }
            expect(heldKeys().has(key)).toBe(false)
            expect(pending.has(key)).toBe(true)
            pending.delete(key)
            held.set(step.worker, key)
          } else {
            const key = held.get(step.worker)
            if (key === undefined) continue
            held.delete(step.worker)
            queue.done(key)
          }
          check()
        }
        for (const key of held.values()) queue.done(key)
        held.clear()
        const drained = new Set<number>()
        for (let key = queue.get(); key !== undefined; key = queue.get()) {
          expect(drained.has(key)).toBe(false)
          drained.add(key)
          queue.done(key)
        }
        expect(drained).toEqual(pending)
      }),
      { numRuns: 300 },
    )
  })

  it("hands keys out in the order they were first added", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 100 }), (keys) => {
        const queue = new WorkQueueState<number>()
        for (const key of keys) queue.add(key)
        const order: Array<number> = []
        for (let key = queue.get(); key !== undefined; key = queue.get()) order.push(key)
        expect(order).toEqual([...new Set(keys)])
      }),
    )
  })
})
