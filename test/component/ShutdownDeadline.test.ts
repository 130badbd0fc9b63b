import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { closingBudget, ShutdownDeadline } from "../../src/component/ShutdownDeadline.ts"

const millis = (duration: Duration.Duration) => Duration.toMillis(duration)

describe("ShutdownDeadline", () => {
  it.effect("leaves the whole budget until shutdown begins, then counts down to zero from the first signal", () =>
    Effect.gen(function* () {
      const deadline = yield* ShutdownDeadline.make("20 seconds")
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(millis(yield* deadline.remaining), 20_000)
      assert.isFalse(yield* deadline.begun)

      yield* deadline.begin
      assert.isTrue(yield* deadline.begun)
      yield* TestClock.adjust("5 seconds")
      yield* deadline.begin
      assert.strictEqual(millis(yield* deadline.remaining), 15_000)
      assert.strictEqual(millis(yield* deadline.forFlushing), 14_000)

      yield* TestClock.adjust("30 seconds")
      assert.strictEqual(millis(yield* deadline.remaining), 0)
      assert.strictEqual(millis(yield* deadline.forFlushing), 0)
    }),
  )

  it.effect("keeps a tenth of a short budget for closing connections", () =>
    Effect.gen(function* () {
      const deadline = yield* ShutdownDeadline.make("4 seconds")
      yield* deadline.begin
      assert.strictEqual(millis(yield* deadline.forFlushing), 3_600)
    }),
  )

  it.effect("cuts what a closing component wants to the time left, and leaves it alone without a deadline", () =>
    Effect.gen(function* () {
      const deadline = yield* ShutdownDeadline.make("10 seconds")
      yield* deadline.begin
      yield* TestClock.adjust("8 seconds")
      assert.strictEqual(millis(yield* closingBudget(Option.some(deadline), "5 seconds")), 2_000)
      assert.strictEqual(millis(yield* closingBudget(Option.some(deadline), "5 seconds", "flushing")), 1_000)
      assert.strictEqual(millis(yield* closingBudget(Option.some(deadline), "1 second")), 1_000)
      assert.strictEqual(millis(yield* closingBudget(Option.none(), "5 seconds")), 5_000)
    }),
  )
})
