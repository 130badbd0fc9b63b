import { Duration, Effect, Schema } from "effect"
import { DurationSetting } from "./DurationSetting.ts"
import { formatGoDuration } from "./GoDuration.ts"
import type { Bounds } from "./SettingBounds.ts"

/**
 * How failed writes are retried, as the OpenTelemetry Collector's `retry_on_failure`: randomized
 * exponential backoff, bounded by the time since a batch's first attempt.
 */
export interface RetrySettings {
  /** Backoff interval before the first retry. */
  readonly initialInterval: Duration.Duration
  /** No retry waits longer than this, whatever the backoff or a sink's retry-after says. */
  readonly maxInterval: Duration.Duration
  /** Factor the backoff interval grows by on each retry. */
  readonly multiplier: number
  /** Each wait is the backoff interval ± this fraction of it, at random, so writers do not retry in step. */
  readonly randomizationFactor: number
  /** Write attempts per batch, the first one included; 0 for no cap (`maxElapsed` alone bounds them). */
  readonly maxAttempts: number
  /** A batch still failing this long after its first attempt is given up; the last attempt starts by then. */
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
  multiplier: 1.5,
  randomizationFactor: 0.5,
  maxAttempts: 0,
  maxElapsed: Duration.minutes(2),
}

export const defaultQueueSettings: QueueSettings = {
  queueSize: 10_000,
  batchSize: 500,
  writeTimeout: Duration.seconds(5),
  retry: defaultRetrySettings,
}

/** The largest `retry.multiplier` accepted; beyond it the second retry already waits `maxInterval`. */
export const maxRetryMultiplier = 10

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
  multiplier: { min: 1, max: maxRetryMultiplier },
  randomizationFactor: { min: 0, max: 1 },
  maxAttempts: { min: 1, max: 100_000, zeroDisables: true },
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

const nonNegativeInteger = "must be 0 or a positive integer"

const NonNegativeInt = Schema.Number.annotate({ message: nonNegativeInteger })
  .check(
    Schema.makeFilter((value: number) => Number.isSafeInteger(value) && value >= 0, { message: nonNegativeInteger }),
  )
  .check(
    Schema.makeFilter((value: number) => value <= queueSettingsBounds.maxAttempts.max, {
      message: `must be at most ${queueSettingsBounds.maxAttempts.max}`,
    }),
  )

const multiplierRule = `must be a number from 1 to ${maxRetryMultiplier}`

const Multiplier = Schema.Number.annotate({ message: multiplierRule }).check(
  Schema.makeFilter((value: number) => value >= 1 && value <= maxRetryMultiplier, { message: multiplierRule }),
)

const randomizationRule = "must be a number from 0 to 1"

const RandomizationFactor = Schema.Number.annotate({ message: randomizationRule }).check(
  Schema.makeFilter((value: number) => value >= 0 && value <= 1, { message: randomizationRule }),
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
  multiplier: withDefault(Multiplier, defaultRetrySettings.multiplier),
  randomizationFactor: withDefault(RandomizationFactor, defaultRetrySettings.randomizationFactor),
  maxAttempts: withDefault(NonNegativeInt, defaultRetrySettings.maxAttempts),
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
