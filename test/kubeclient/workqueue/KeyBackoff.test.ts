import { it as effectIt } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { backoffDelayMs, backoffSchedule, KeyBackoff } from "../../../src/kubeclient/workqueue/KeyBackoff.ts"

const policy = { baseMs: 100, maxMs: 5_000, jitter: 0.5 }

describe("per-key backoff", () => {
  it("doubles from the base and stops at the cap", () => {
    const delays = Array.from({ length: 10 }, (_, failures) => backoffDelayMs(failures, policy, 0))
    expect(delays).toEqual([100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000, 5_000])
  })

  it("stays within [(1 - jitter) · d, d] under the cap for any failure count and random draw", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (failures, unit, jitter) => {
          const jittered = { ...policy, jitter }
          const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(failures, 52))
          const delay = backoffDelayMs(failures, jittered, unit)
          expect(delay).toBeLessThanOrEqual(ceiling)
          expect(delay).toBeLessThanOrEqual(policy.maxMs)
          expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling * (1 - jitter)))
        },
      ),
    )
  })

  it("spreads the delays of keys that fail together", () => {
    const delays = new Set([0.05, 0.35, 0.65, 0.95].map((unit) => backoffDelayMs(3, policy, unit)))
    expect(delays.size).toBe(4)
  })

  it("counts failures per key and forget resets them", () => {
    const backoff = new KeyBackoff<string>(policy)
    expect(backoff.when("a", 0)).toBe(100)
    expect(backoff.when("a", 0)).toBe(200)
    expect(backoff.when("b", 0)).toBe(100)
    expect(backoff.retries("a")).toBe(2)
    backoff.forget("a")
    expect(backoff.retries("a")).toBe(0)
    expect(backoff.when("a", 0)).toBe(100)
    expect(backoff.size).toBe(2)
  })
})

describe("backoff schedule", () => {
  effectIt.effect("retries after base, 2·base, … up to the cap", () =>
    Effect.gen(function* () {
      let attempts = 0
      const failing = Effect.suspend(() => {
        attempts++
        return Effect.fail("down")
      })
      const retrying = yield* Effect.forkChild(
        failing.pipe(Effect.retry(backoffSchedule({ baseMs: 100, maxMs: 300, jitter: 0 }))),
      )
      yield* Effect.yieldNow
      const attemptsAfter = []
      for (const step of [99, 1, 199, 1, 299, 1, 300]) {
        yield* TestClock.adjust(step)
        attemptsAfter.push(attempts)
      }
      expect(attemptsAfter).toEqual([1, 2, 2, 3, 3, 4, 5])
      yield* Fiber.interrupt(retrying)
    }),
  )
})
