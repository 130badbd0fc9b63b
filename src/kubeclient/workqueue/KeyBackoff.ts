import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
/** Capped exponential backoff with jitter: `baseMs · 2^failures`, at most `maxMs`, shortened by up to `jitter`. */
export interface BackoffPolicy {
  readonly baseMs: number
  readonly maxMs: number
  /** Fraction in [0, 1] by which a delay may be shortened at random, so that keys failing together spread out. */
  readonly jitter: number
}

/**
 * The delay before retry number `failures + 1`, for a uniform random `unit` in [0, 1). Always within
 * `[(1 - jitter) · d, d]` where `d = min(maxMs, baseMs · 2^failures)`: the cap is never exceeded.
 */
export const backoffDelayMs = (failures: number, policy: BackoffPolicy, unit: number): number => {
  const exponent = Math.min(Math.max(0, Math.floor(failures)), 52)
  const capped = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent)
  const jitter = Math.min(1, Math.max(0, policy.jitter))
  const shortening = capped * jitter * Math.min(1, Math.max(0, unit))
  return Math.max(0, Math.round(capped - shortening))
}

/**
 * The per-key rate-limiting policy of the work queue (client-go's item exponential failure rate limiter,
 * with jitter): each `when` counts a failure of the key and returns the delay before its next attempt;
 * `forget` clears the key's history once it succeeded or was given up.
 */
export class KeyBackoff<K> {
  private readonly failures = new Map<K, number>()
  readonly policy: BackoffPolicy

  constructor(policy: BackoffPolicy) {
    this.policy = policy
  }

  /** Counts one more failure of `key` and returns the delay before retrying it. */
  when(key: K, unit: number): number {
    const failures = this.failures.get(key) ?? 0
    this.failures.set(key, failures + 1)
    return backoffDelayMs(failures, this.policy, unit)
  }

  /** How many times `key` was put back since it last succeeded. */
  retries(key: K): number {
    return this.failures.get(key) ?? 0
  }

  forget(key: K): void {
    this.failures.delete(key)
  }

  /** Keys with a failure history; bounded by the keys that failed and were not forgotten. */
  get size(): number {
    return this.failures.size
  }
}

/**
 * The same capped, jittered backoff as a `Schedule` for retrying an effect (informer restarts): the
 * n-th retry waits `backoffDelayMs(n - 1)`. It recurs without end; callers bound it with `upTo` or `while`
 * where giving up makes sense.
 */
export const backoffSchedule = (policy: BackoffPolicy): Schedule.Schedule<number> =>
  Schedule.forever.pipe(
    Schedule.modifyDelay(({ attempt }) =>
      Random.next.pipe(Effect.map((unit) => Duration.millis(backoffDelayMs(attempt - 1, policy, unit)))),
    ),
  )
