import { Duration, Effect, Schema } from "effect"
import { formatGoDuration } from "../config/GoDuration.ts"
import type { Bounds } from "../config/SettingBounds.ts"
import { DurationSetting } from "./DurationSetting.ts"

/** How failed writes are retried: capped exponential backoff with jitter, bounded in attempts and time. */
export interface RetrySettings {
  /** Delay before the first retry; doubles on each retry (±20% jitter). */
  readonly initialInterval: Duration.Duration
  /** No retry waits longer than this, whatever the backoff or a sink's retry-after says. */
  readonly maxInterval: Duration.Duration
  /** Write attempts per batch, the first one included; 1 disables retries. */
  readonly maxAttempts: number
  /** No retry starts once this much time has passed since the first attempt of a batch. */
  readonly maxElapsed: Duration.Duration
}

/** The bounded buffer and retry settings every exporter's config section carries. */
export interface QueueSettings {
  /** Records held at most (waiting and being written); what does not fit is dropped and counted. */
  readonly queueSize: number
  /** Records handed to the sink in one write at most. */
  readonly batchSize: number
  /** Deadline of one write attempt. */
  readonly writeTimeout: Duration.Duration
  readonly retry: RetrySettings
}

export const defaultRetrySettings: RetrySettings = {
  initialInterval: Duration.seconds(1),
  maxInterval: Duration.seconds(30),
  maxAttempts: 5,
  maxElapsed: Duration.minutes(2),
}

export const defaultQueueSettings: QueueSettings = {
  queueSize: 10_000,
  batchSize: 500,
  writeTimeout: Duration.seconds(5),
  retry: defaultRetrySettings,
}

const HOUR_MILLIS = 3_600_000

/**
 * The range of each common setting: a queue holds records in memory, and every delay must fit a timer.
 * The settings table documents them; the sections of exporters that validate themselves use them too.
 */
export const queueSettingsBounds = {
  queueSize: { min: 1, max: 1_000_000 },
  batchSize: { min: 1, max: 100_000 },
  writeTimeout: { min: 1, max: HOUR_MILLIS },
  initialInterval: { min: 1, max: HOUR_MILLIS },
  maxInterval: { min: 1, max: HOUR_MILLIS },
  maxAttempts: { min: 1, max: 100_000 },
  maxElapsed: { min: 1, max: 24 * HOUR_MILLIS },
} as const satisfies Readonly<Record<string, Bounds>>

const positiveInteger = "must be a positive integer"

const boundedInt = (bounds: Bounds) =>
  Schema.Number.annotate({ message: positiveInteger })
    .check(Schema.makeFilter((value: number) => Number.isSafeInteger(value) && value > 0, { message: positiveInteger }))
    .check(
      Schema.makeFilter((value: number) => value <= bounds.max, {
        message: `must be between ${bounds.min} and ${bounds.max}`,
      }),
    )

const boundedDuration = (bounds: Bounds) =>
  DurationSetting.check(
    Schema.makeFilter((duration: Duration.Duration) => Duration.toMillis(duration) <= bounds.max, {
      message: `must be at most ${formatGoDuration(bounds.max)}`,
    }),
  )

const withDefault = <S extends Schema.Top>(schema: S, value: S["Encoded"]) =>
  schema.pipe(Schema.withDecodingDefaultKey(Effect.succeed(value)))

const defaultMillis = (duration: Duration.Duration): number => Duration.toMillis(duration)

const RetrySettingsSection = Schema.Struct({
  initialInterval: withDefault(
    boundedDuration(queueSettingsBounds.initialInterval),
    defaultMillis(defaultRetrySettings.initialInterval),
  ),
  maxInterval: withDefault(
    boundedDuration(queueSettingsBounds.maxInterval),
    defaultMillis(defaultRetrySettings.maxInterval),
  ),
  maxAttempts: withDefault(boundedInt(queueSettingsBounds.maxAttempts), defaultRetrySettings.maxAttempts),
  maxElapsed: withDefault(
    boundedDuration(queueSettingsBounds.maxElapsed),
    defaultMillis(defaultRetrySettings.maxElapsed),
  ),
}).check(
  Schema.makeFilter((retry) =>
    Duration.isGreaterThan(retry.initialInterval, retry.maxInterval)
      ? { path: ["initialInterval"], issue: "must not be longer than maxInterval" }
      : undefined,
  ),
)

/**
 * The Schema fields of the common settings, to spread into an exporter's section schema; each key
 * is optional and defaults to `defaultQueueSettings`.
 */
export const queueSettingsFields = {
  queueSize: withDefault(boundedInt(queueSettingsBounds.queueSize), defaultQueueSettings.queueSize),
  batchSize: withDefault(boundedInt(queueSettingsBounds.batchSize), defaultQueueSettings.batchSize),
  writeTimeout: withDefault(
    boundedDuration(queueSettingsBounds.writeTimeout),
    defaultMillis(defaultQueueSettings.writeTimeout),
  ),
  retry: withDefault(RetrySettingsSection, {}),
}

/** Cross-key rule of the common settings, to add with `.check(...)` to an exporter's section schema. */
export const batchFitsQueue = Schema.makeFilter((settings: Pick<QueueSettings, "queueSize" | "batchSize">) =>
  settings.batchSize > settings.queueSize ? { path: ["batchSize"], issue: "must not exceed queueSize" } : undefined,
)
