import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { expect, it as vitestIt } from "vitest"
import * as WorkQueue from "../../../src/kubeclient/workqueue/WorkQueue.ts"

const policy = { baseMs: 100, maxMs: 1_000, jitter: 0.5 }

const isWaiting = <A, E>(fiber: Fiber.Fiber<A, E>) => fiber.pollUnsafe() === undefined

describe("WorkQueue", () => {
  it.effect("a getter waits until a key is added", () =>
    Effect.gen(function* () {
      const queue = yield* WorkQueue.make<string>(policy)
      const getter = yield* Effect.forkChild(queue.get)
      yield* Effect.yieldNow
      assert.isTrue(isWaiting(getter))
      yield* queue.add("a")
      assert.deepStrictEqual(yield* Fiber.join(getter), Option.some("a"))
    }),
  )

  it.effect("a key added while processing waits for done, then goes to the next worker", () =>
    Effect.gen(function* () {
      const queue = yield* WorkQueue.make<string>(policy)
      yield* queue.add("a")
      assert.deepStrictEqual(yield* queue.get, Option.some("a"))
      yield* queue.add("a")
      yield* queue.add("a")
      const second = yield* Effect.forkChild(queue.get)
      yield* Effect.yieldNow
      assert.isTrue(isWaiting(second))
      assert.strictEqual(yield* queue.len, 0)
      yield* queue.done("a")
      assert.deepStrictEqual(yield* Fiber.join(second), Option.some("a"))
      yield* queue.done("a")
      assert.strictEqual(yield* queue.len, 0)
    }),
  )

  it.effect("a getter interrupted after its wake-up passes the key on", () =>
    Effect.gen(function* () {
      const queue = yield* WorkQueue.make<string>(policy)
      const first = yield* Effect.forkChild(queue.get)
      const second = yield* Effect.forkChild(queue.get)
      yield* Effect.yieldNow
      yield* queue.add("a")
      yield* Fiber.interrupt(first)
      const firstExit = first.pollUnsafe()
      if (firstExit !== undefined && Exit.isSuccess(firstExit)) {
        assert.deepStrictEqual(firstExit.value, Option.some("a"))
        return
      }
      assert.deepStrictEqual(yield* Fiber.join(second), Option.some("a"))
    }),
  )

  it.effect("processNext runs the handler on one key at a time and marks it done", () =>
    Effect.gen(function* () {
      const queue = yield* WorkQueue.make<string>(policy)
      const seen: Array<string> = []
      yield* queue.add("a")
      yield* queue.add("b")
      const handled = yield* queue.processNext((key) =>
        Effect.gen(function* () {
          seen.push(key)
          yield* queue.add(key)
        }),
      )
      assert.isTrue(handled)
      assert.deepStrictEqual(seen, ["a"])
      assert.strictEqual(yield* queue.len, 2)
      yield* queue.shutDown
      assert.isFalse(yield* queue.processNext(() => Effect.void))
    }),
  )

  it.effect("processNext interrupted while its handler runs still marks the key done", () =>
    Effect.gen(function* () {
      const queue = yield* WorkQueue.make<string>(policy)
      yield* queue.add("a")
      const worker = yield* Effect.forkChild(queue.processNext(() => Effect.never))
      yield* Effect.yieldNow
      yield* queue.add("a")
      yield* Fiber.interrupt(worker)
      assert.strictEqual(yield* queue.len, 1)
      assert.deepStrictEqual(yield* queue.get, Option.some("a"))
    }),
  )

  it.effect("shutDown releases every waiting getter and ignores later adds", () =>
    Effect.gen(function* () {
      const queue = yield* WorkQueue.make<string>(policy)
      const getters = yield* Effect.forEach([1, 2, 3], () => Effect.forkChild(queue.get))
      yield* Effect.yieldNow
      yield* queue.shutDown
      for (const getter of getters) {
        assert.deepStrictEqual(yield* Fiber.join(getter), Option.none())
      }
      yield* queue.add("late")
      assert.deepStrictEqual(yield* queue.get, Option.none())
    }),
  )

  it.effect("addRateLimited waits a capped, jittered, growing delay; forget resets it", () =>
    Effect.gen(function* () {
      const queue = yield* WorkQueue.make<string>(policy)
      /** Puts the key back rate-limited and returns the virtual milliseconds until it is queued again. */
      const requeueDelay = Effect.gen(function* () {
        yield* queue.addRateLimited("a")
        let waited = 0
        while ((yield* queue.len) === 0) {
          yield* TestClock.adjust("1 millis")
          waited++
        }
        const key = yield* queue.get
        assert.deepStrictEqual(key, Option.some("a"))
        yield* queue.done("a")
        return waited
      })
      const bounds = [
        [50, 100],
        [100, 200],
        [200, 400],
        [400, 800],
        [500, 1_000],
        [500, 1_000],
      ]
      for (const [low, high] of bounds) {
        const waited = yield* requeueDelay
        assert.isAtLeast(waited, low as number)
        assert.isAtMost(waited, high as number)
      }
      assert.strictEqual(yield* queue.retries("a"), bounds.length)
      yield* queue.forget("a")
      assert.strictEqual(yield* queue.retries("a"), 0)
      const afterForget = yield* requeueDelay
      assert.isAtMost(afterForget, 100)
    }),
  )

  it.effect("addAfter keeps the earliest pending time of a key and queues it once", () =>
    Effect.gen(function* () {
      const queue = yield* WorkQueue.make<string>(policy)
      yield* queue.addAfter("a", "1 second")
      yield* queue.addAfter("a", "100 millis")
      yield* queue.addAfter("a", "5 seconds")
      yield* TestClock.adjust("99 millis")
      assert.strictEqual(yield* queue.len, 0)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* queue.len, 1)
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* queue.len, 1)
    }),
  )

  it.effect("shutDown cancels delayed adds", () =>
    Effect.gen(function* () {
      const queue = yield* WorkQueue.make<string>(policy)
      yield* queue.addAfter("a", "1 second")
      yield* queue.shutDown
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* queue.len, 0)
      assert.strictEqual(queue.depth(), 0)
    }),
  )

  it.effect("drain queues the delayed keys at once, hands out every key once, then releases the workers", () =>
    Effect.gen(function* () {
      const queue = yield* WorkQueue.make<string>(policy)
      yield* queue.add("a")
      yield* queue.addAfter("b", "1 hour")
      const handled: Array<string> = []
      const worker = yield* Effect.forkChild(
        Effect.gen(function* () {
          while (yield* queue.processNext((key) => Effect.sync(() => void handled.push(key)))) {}
        }),
      )
      yield* Effect.yieldNow
      yield* queue.drain
      yield* queue.add("c")
      yield* Fiber.join(worker)
      assert.deepStrictEqual(handled, ["a", "b"])
      assert.strictEqual(yield* queue.unfinished, 0)
      assert.deepStrictEqual(yield* queue.get, Option.none())
    }),
  )
})

describe("WorkQueue with concurrent workers", () => {
  const script = fc.array(fc.record({ key: fc.integer({ min: 0, max: 5 }), pause: fc.integer({ min: 0, max: 3 }) }), {
    minLength: 1,
    maxLength: 60,
  })

  vitestIt("never runs one key in two workers at once, and runs every key again after its last add", async () => {
    await fc.assert(
      fc.asyncProperty(script, fc.integer({ min: 1, max: 4 }), async (adds, workerCount) => {
        const inFlight = new Set<number>()
        const overlaps: Array<number> = []
        const lastAdded = new Map<number, number>()
        const lastStarted = new Map<number, number>()
        let clock = 0
        await Effect.runPromise(
          Effect.scoped(
            Effect.gen(function* () {
              const queue = yield* WorkQueue.make<number>(policy)
              const handler = (key: number) =>
                Effect.gen(function* () {
                  if (inFlight.has(key)) overlaps.push(key)
                  inFlight.add(key)
                  lastStarted.set(key, ++clock)
                  for (let turn = 0; turn < (key % 3) + 1; turn++) yield* Effect.yieldNow
                  inFlight.delete(key)
                })
              const worker = Effect.gen(function* () {
                while (yield* queue.processNext(handler)) {
                  yield* Effect.yieldNow
                }
              })
              const workers = yield* Effect.forEach(Array.from({ length: workerCount }), () => Effect.forkChild(worker))
              for (const { key, pause } of adds) {
                lastAdded.set(key, ++clock)
                yield* queue.add(key)
                for (let turn = 0; turn < pause; turn++) yield* Effect.yieldNow
              }
              while ((yield* queue.len) > 0 || inFlight.size > 0) yield* Effect.yieldNow
              yield* queue.shutDown
              yield* Fiber.joinAll(workers)
            }),
          ),
        )
        expect(overlaps).toEqual([])
        for (const [key, added] of lastAdded) {
          expect(lastStarted.get(key) ?? 0).toBeGreaterThan(added)
        }
      }),
      { numRuns: 100 },
    )
  })
})
