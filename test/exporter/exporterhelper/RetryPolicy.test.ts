import { assert, describe, it } from "@effect/vitest"
import { Duration } from "effect"
import { defaultRetrySettings, type RetrySettings } from "../../../src/exporter/exporterhelper/QueueSettings.ts"
import { backoffInterval, type FailedAttempt, nextRetry } from "../../../src/exporter/exporterhelper/RetryPolicy.ts"

const policy: RetrySettings = {
  initialInterval: Duration.seconds(1),
  maxInterval: Duration.seconds(30),
  multiplier: 1.5,
  randomizationFactor: 0.5,
  maxAttempts: 0,
  maxElapsed: Duration.minutes(2),
}

const failed = (overrides: Partial<FailedAttempt> = {}): FailedAttempt => ({
  attempts: 1,
  elapsed: Duration.zero,
  retryable: true,
  retryAfter: undefined,
  random: 0.5,
  ...overrides,
})

const delayOf = (settings: RetrySettings, attempt: FailedAttempt): number => {
  const decision = nextRetry(settings, attempt)
  assert.strictEqual(decision._tag, "Retry")
  return decision._tag === "Retry" ? Duration.toMillis(decision.delay) : Number.NaN
}

describe("retry policy", () => {
  it("grows the backoff by the multiplier up to maxInterval", () => {
    assert.deepStrictEqual(
      [1, 2, 3, 4, 9, 10, 50].map((retry) => backoffInterval(policy, retry)),
      [1000, 1500, 2250, 3375, 25_628.90625, 30_000, 30_000],
    )
  })

  it("spreads each wait by ± randomizationFactor, never beyond maxInterval", () => {
    assert.strictEqual(delayOf(policy, failed({ attempts: 3, random: 0 })), 1125)
    assert.strictEqual(delayOf(policy, failed({ attempts: 3, random: 0.5 })), 2250)
    assert.strictEqual(delayOf(policy, failed({ attempts: 3, random: 0.999_999 })), 3374)
    assert.strictEqual(delayOf(policy, failed({ attempts: 20, random: 0.999_999 })), 30_000)
    assert.strictEqual(delayOf({ ...policy, randomizationFactor: 0 }, failed({ attempts: 2, random: 0.9 })), 1500)
  })

  it("waits as long as the sink asks, capped by maxInterval and by what is left of maxElapsed", () => {
    assert.strictEqual(delayOf(policy, failed({ retryAfter: Duration.seconds(7) })), 7000)
    assert.strictEqual(delayOf(policy, failed({ retryAfter: Duration.hours(1) })), 30_000)
    assert.strictEqual(
      delayOf(policy, failed({ elapsed: Duration.seconds(110), retryAfter: Duration.seconds(25) })),
      10_000,
    )
    assert.strictEqual(delayOf(policy, failed({ attempts: 12, elapsed: Duration.millis(119_900) })), 100)
  })

  it("gives up once maxElapsed has passed, on a permanent failure, or at an attempt cap that is set", () => {
    assert.deepStrictEqual(nextRetry(policy, failed({ elapsed: Duration.minutes(2) })), {
      _tag: "GiveUp",
      reason: "elapsed",
    })
    assert.deepStrictEqual(nextRetry(policy, failed({ retryable: false })), { _tag: "GiveUp", reason: "permanent" })
    assert.deepStrictEqual(nextRetry({ ...policy, maxAttempts: 3 }, failed({ attempts: 3 })), {
      _tag: "GiveUp",
      reason: "attempts",
    })
    assert.strictEqual(nextRetry(policy, failed({ attempts: 1_000, elapsed: Duration.seconds(119) }))._tag, "Retry")
  })

  it("by default lets no attempt cap cut a batch off before maxElapsed", () => {
    assert.strictEqual(defaultRetrySettings.maxAttempts, 0)
    let elapsed = 0
    let attempts = 0
    for (;;) {
      attempts += 1
      const decision = nextRetry(
        defaultRetrySettings,
        failed({ attempts, elapsed: Duration.millis(elapsed), random: 0 }),
      )
      if (decision._tag === "GiveUp") {
        assert.strictEqual(decision.reason, "elapsed")
        break
      }
      elapsed += Duration.toMillis(decision.delay)
    }
    assert.strictEqual(elapsed, Duration.toMillis(defaultRetrySettings.maxElapsed))
    assert.isAbove(attempts, 5)
  })
})
