import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as TokenBucket from "../../../src/kubeclient/rest/TokenBucket.ts"

const rate = { qps: 2, burst: 3 }

describe("TokenBucket", () => {
  it("reserves the burst at once, then one token per 1/qps seconds", () => {
    let state = TokenBucket.fullBucket(rate, 0)
    const waits: Array<number> = []
    for (let call = 0; call < 6; call++) {
      const [wait, next] = TokenBucket.reserveToken(state, rate, 0)
      waits.push(wait)
      state = next
    }
    assert.deepStrictEqual(waits, [0, 0, 0, 500, 1_000, 1_500])
  })

  it("refills with time, never above the burst", () => {
    let state = TokenBucket.fullBucket(rate, 0)
    for (let call = 0; call < 3; call++) state = TokenBucket.reserveToken(state, rate, 0)[1]
    const [wait, next] = TokenBucket.reserveToken(state, rate, 60_000)
    assert.strictEqual(wait, 0)
    assert.strictEqual(next.tokens, rate.burst - 1)
  })

  it.effect("take lets the burst through, then waits for the rate", () =>
    Effect.gen(function* () {
      const bucket = yield* TokenBucket.make(rate)
      yield* bucket.take
      yield* bucket.take
      yield* bucket.take
      const fourth = yield* Effect.forkChild(bucket.take)
      yield* TestClock.adjust("499 millis")
      assert.isUndefined(fourth.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fourth)
      const fifth = yield* Effect.forkChild(bucket.take)
      yield* TestClock.adjust("499 millis")
      assert.isUndefined(fifth.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fifth)
    }),
  )

  it.effect("a caller interrupted while waiting gives its token back", () =>
    Effect.gen(function* () {
      const bucket = yield* TokenBucket.make({ qps: 1, burst: 1 })
      yield* bucket.take
      const waiting = yield* Effect.forkChild(bucket.take)
      yield* TestClock.adjust("100 millis")
      yield* Fiber.interrupt(waiting)
      const next = yield* Effect.forkChild(bucket.take)
      yield* TestClock.adjust("900 millis")
      yield* Fiber.join(next)
    }),
  )
})
