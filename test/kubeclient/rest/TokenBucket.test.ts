import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as TokenBucket from "../../../src/kubeclient/rest/TokenBucket.ts"

const rate = { qps: 2, burst: 3 }
const idle = { waiting: 0, queued: 0 }
const noneQueued = () => 0

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

  it.effect("takeBy takes the token when it comes before the deadline", () =>
    Effect.gen(function* () {
      const bucket = yield* TokenBucket.make({ qps: 2, burst: 1 })
      assert.isTrue(yield* bucket.takeBy(0))
      const waiting = yield* Effect.forkChild(bucket.takeBy(500))
      yield* TestClock.adjust("499 millis")
      assert.isUndefined(waiting.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      assert.isTrue(yield* Fiber.join(waiting))
    }),
  )

  it.effect("takeBy answers false at the deadline when the token comes later, and gives the token back", () =>
    Effect.gen(function* () {
      const bucket = yield* TokenBucket.make({ qps: 1, burst: 1 })
      yield* bucket.take
      const late = yield* Effect.forkChild(bucket.takeBy(300))
      yield* TestClock.adjust("299 millis")
      assert.isUndefined(late.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      assert.isFalse(yield* Fiber.join(late))
      // The token it reserved is there again for the next caller, due when the first was.
      const next = yield* Effect.forkChild(bucket.take)
      yield* TestClock.adjust("699 millis")
      assert.isUndefined(next.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(next)
    }),
  )

  it.effect(
    "a takeBy waiting for its token keeps the yielding calls back, and gives its token back when interrupted",
    () =>
      Effect.gen(function* () {
        const bucket = yield* TokenBucket.make({ qps: 1, burst: 1 }, 10_000)
        yield* bucket.take
        const waiting = yield* Effect.forkChild(bucket.takeBy(5_000))
        const yielding = yield* Effect.forkChild(bucket.takeYielding(noneQueued))
        yield* TestClock.adjust("100 millis")
        assert.isUndefined(yielding.pollUnsafe())
        yield* Fiber.interrupt(waiting)
        // With nothing waiting any more, the yielding call takes the token the interrupted one gave back.
        yield* TestClock.adjust("900 millis")
        yield* Fiber.join(yielding)
      }),
  )

  it("a yielding call reserves a spare token, one no take waits for, or any once it has yielded for the limit", () => {
    const empty = TokenBucket.reserveToken(TokenBucket.fullBucket({ qps: 2, burst: 1 }, 0), { qps: 2, burst: 1 }, 0)[1]
    const full = TokenBucket.fullBucket(rate, 0)
    assert.deepStrictEqual(TokenBucket.yieldingTurn(full, rate, 0, idle, 0, 2_000), { _tag: "Reserve" })
    assert.deepStrictEqual(TokenBucket.yieldingTurn(full, rate, 0, { waiting: 1, queued: 0 }, 1_999, 2_000), {
      _tag: "YieldToWaiting",
    })
    assert.deepStrictEqual(TokenBucket.yieldingTurn(full, rate, 0, { waiting: 0, queued: 7 }, 1_999, 2_000), {
      _tag: "YieldToQueued",
      millis: 500,
    })
    assert.deepStrictEqual(TokenBucket.yieldingTurn(empty, { qps: 2, burst: 1 }, 100, idle, 100, 2_000), {
      _tag: "AwaitSpareToken",
      millis: 400,
    })
    assert.deepStrictEqual(TokenBucket.yieldingTurn(empty, { qps: 2, burst: 1 }, 500, idle, 500, 2_000), {
      _tag: "Reserve",
    })
    assert.deepStrictEqual(
      TokenBucket.yieldingTurn(empty, { qps: 2, burst: 1 }, 0, { waiting: 5, queued: 9 }, 2_000, 2_000),
      {
        _tag: "Reserve",
      },
    )
  })
})

describe("TokenBucket yielding calls", () => {
  /** Forks `call` and records its name once it got its token. */
  const tokenOrder = (order: Array<string>) => (name: string, call: Effect.Effect<void>) =>
    Effect.forkChild(call.pipe(Effect.andThen(Effect.sync(() => order.push(name)))))

  it.effect("the takes waiting go first: a yielding call gets its token after them", () =>
    Effect.gen(function* () {
      const order: Array<string> = []
      const got = tokenOrder(order)
      const bucket = yield* TokenBucket.make({ qps: 1, burst: 1 }, 60_000)
      yield* bucket.take
      yield* got("reading-1", bucket.take)
      const patch = yield* got("patch", bucket.takeYielding(noneQueued))
      yield* got("reading-2", bucket.take)
      yield* got("reading-3", bucket.take)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(bucket.yieldingCalls(), 1)
      for (let second = 0; second < 4; second++) yield* TestClock.adjust("1 second")
      yield* Fiber.join(patch)
      assert.deepStrictEqual(order, ["reading-1", "reading-2", "reading-3", "patch"])
      assert.strictEqual(bucket.yieldingCalls(), 0)
    }),
  )

  it.effect("a yielding call takes a token at once while no take waits, within the burst", () =>
    Effect.gen(function* () {
      const bucket = yield* TokenBucket.make({ qps: 1, burst: 2 }, 60_000)
      yield* bucket.takeYielding(noneQueued)
      yield* bucket.takeYielding(noneQueued)
      const third = yield* Effect.forkChild(bucket.takeYielding(noneQueued))
      yield* TestClock.adjust("999 millis")
      assert.isUndefined(third.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(third)
    }),
  )

  it.effect(
    "a yielding call takes only a spare token: a take that asks before the next token is there goes first",
    () =>
      Effect.gen(function* () {
        const order: Array<string> = []
        const got = tokenOrder(order)
        const bucket = yield* TokenBucket.make({ qps: 1, burst: 1 }, 60_000)
        yield* bucket.take
        yield* got("reading", bucket.take)
        const patch = yield* got("patch", bucket.takeYielding(noneQueued))
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual(order, ["reading"])
        // No take waits now, but the next token is a second away: a reading that asks meanwhile has it.
        yield* TestClock.adjust("500 millis")
        yield* got("later-reading", bucket.take)
        yield* TestClock.adjust("500 millis")
        assert.deepStrictEqual(order, ["reading", "later-reading"])
        // Then nothing waits: the patch has the next token as soon as it is there.
        yield* TestClock.adjust("999 millis")
        assert.isUndefined(patch.pollUnsafe())
        yield* TestClock.adjust("1 millis")
        yield* Fiber.join(patch)
        assert.deepStrictEqual(order, ["reading", "later-reading", "patch"])
      }),
  )

  it.effect("a yielding call lets the calls queued to come go first, looking again a token's time later", () =>
    Effect.gen(function* () {
      const bucket = yield* TokenBucket.make({ qps: 10, burst: 5 }, 2_000)
      let queued = 3
      const patch = yield* Effect.forkChild(bucket.takeYielding(() => queued))
      // Tokens are there and nothing waits for one, but pods wait to be read: the patch leaves them the tokens.
      yield* TestClock.adjust("1 second")
      assert.isUndefined(patch.pollUnsafe())
      queued = 0
      yield* TestClock.adjust("100 millis")
      yield* Fiber.join(patch)
      assert.strictEqual(bucket.yieldingCalls(), 0)
    }),
  )

  it.effect("a yielding call never starves: after the limit it takes its turn among takes that keep coming", () =>
    Effect.gen(function* () {
      const order: Array<string> = []
      const got = tokenOrder(order)
      const bucket = yield* TokenBucket.make({ qps: 10, burst: 1 }, 2_000)
      yield* bucket.take
      // Ten readers that keep asking for the next token: some take always waits.
      const reader = (name: string) => got(name, Effect.forever(bucket.take))
      for (let worker = 0; worker < 10; worker++) yield* reader(`reader-${worker}`)
      const patch = yield* got("patch", bucket.takeYielding(noneQueued))
      yield* TestClock.adjust("1999 millis")
      assert.isUndefined(patch.pollUnsafe())
      assert.strictEqual(bucket.yieldingCalls(), 1)
      // At the limit it reserves behind the ten readers waiting then: a second at 10 QPS.
      yield* TestClock.adjust("1 millis")
      yield* TestClock.adjust("999 millis")
      assert.isUndefined(patch.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(patch)
      assert.deepStrictEqual(order, ["patch"])
    }),
  )

  it.effect("an interrupted yielding call is no longer counted, and a take interrupted while waiting lets it go", () =>
    Effect.gen(function* () {
      const bucket = yield* TokenBucket.make({ qps: 1, burst: 1 }, 60_000)
      yield* bucket.take
      const reading = yield* Effect.forkChild(bucket.take)
      const first = yield* Effect.forkChild(bucket.takeYielding(noneQueued))
      const second = yield* Effect.forkChild(bucket.takeYielding(noneQueued))
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(bucket.yieldingCalls(), 2)
      yield* Fiber.interrupt(first)
      assert.strictEqual(bucket.yieldingCalls(), 1)
      // The waiting take gives its token back: the yielding call has it a second after the first take.
      yield* Fiber.interrupt(reading)
      yield* TestClock.adjust("998 millis")
      assert.isUndefined(second.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(second)
      assert.strictEqual(bucket.yieldingCalls(), 0)
    }),
  )
})
