import * as Duration from "effect/Duration"
import type { RetrySettings } from "./QueueSettings.ts"

/** A write attempt of a batch that failed, as the retry policy sees it. */
export interface FailedAttempt {
  /** Attempts made for the batch so far, the failed one included. */
  readonly attempts: number
  /** Time since the batch's first attempt started. */
  readonly elapsed: Duration.Duration
  readonly retryable: boolean
  /** How long the sink asked to wait (an HTTP `Retry-After`). */
  readonly retryAfter: Duration.Duration | undefined
  /** Uniform in [0, 1): where the delay falls within the randomization range. */
  readonly random: number
}

export type GiveUpReason = "permanent" | "attempts" | "elapsed"

export type RetryDecision =
  | { readonly _tag: "Retry"; readonly delay: Duration.Duration }
  | { readonly _tag: "GiveUp"; readonly reason: GiveUpReason }

/**
 * The backoff interval before retry number `retry` (1 for the first): `initialInterval` multiplied by
 * `multiplier` on each retry, at most `maxInterval`.
 */
export const backoffInterval = (settings: RetrySettings, retry: number): number =>
  Math.min(
    Duration.toMillis(settings.initialInterval) * settings.multiplier ** Math.max(0, retry - 1),
    Duration.toMillis(settings.maxInterval),
  )

/**
 * What follows a failed attempt, as the OpenTelemetry Collector's `retry_on_failure` decides it: a
 * permanent failure is given up at once; otherwise the backoff interval, randomized by
 * ±`randomizationFactor` and stretched to the sink's retry-after, waits at most `maxInterval` and never
 * past `maxElapsed` after the first attempt, so the last attempt lands at `maxElapsed` at the latest and
 * an outage shorter than that loses nothing. `maxAttempts` 0 puts no cap on the attempts.
 */
export const nextRetry = (settings: RetrySettings, failed: FailedAttempt): RetryDecision => {
  if (!failed.retryable) return { _tag: "GiveUp", reason: "permanent" }
  if (settings.maxAttempts > 0 && failed.attempts >= settings.maxAttempts) return { _tag: "GiveUp", reason: "attempts" }
  const remaining = Duration.toMillis(settings.maxElapsed) - Duration.toMillis(failed.elapsed)
  if (remaining <= 0) return { _tag: "GiveUp", reason: "elapsed" }
  const interval = backoffInterval(settings, failed.attempts)
  const spread = settings.randomizationFactor * interval
  const randomized = interval - spread + failed.random * 2 * spread
  const asked = failed.retryAfter === undefined ? 0 : Duration.toMillis(failed.retryAfter)
  const delay = Math.min(Math.max(randomized, asked), Duration.toMillis(settings.maxInterval), remaining)
  return { _tag: "Retry", delay: Duration.millis(Math.max(0, Math.floor(delay))) }
}
