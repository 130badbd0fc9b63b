import { Duration, Effect, Schema } from "effect"
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

const positiveInteger = "must be a positive integer"

const PositiveInt = Schema.Number.annotate({ message: positiveInteger }).check(
  Schema.makeFilter((value: number) => Number.isSafeInteger(value) && value > 0, { message: positiveInteger }),
)

const withDefault = <S extends Schema.Top>(schema: S, value: S["Encoded"]) =>
  schema.pipe(Schema.withDecodingDefaultKey(Effect.succeed(value)))

const defaultMillis = (duration: Duration.Duration): number => Duration.toMillis(duration)

const RetrySettingsSection = Schema.Struct({
  initialInterval: withDefault(DurationSetting, defaultMillis(defaultRetrySettings.initialInterval)),
  maxInterval: withDefault(DurationSetting, defaultMillis(defaultRetrySettings.maxInterval)),
  maxAttempts: withDefault(PositiveInt, defaultRetrySettings.maxAttempts),
  maxElapsed: withDefault(DurationSetting, defaultMillis(defaultRetrySettings.maxElapsed)),
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
  queueSize: withDefault(PositiveInt, defaultQueueSettings.queueSize),
  batchSize: withDefault(PositiveInt, defaultQueueSettings.batchSize),
  writeTimeout: withDefault(DurationSetting, defaultMillis(defaultQueueSettings.writeTimeout)),
  retry: withDefault(RetrySettingsSection, {}),
}

/** Cross-key rule of the common settings, to add with `.check(...)` to an exporter's section schema. */
export const batchFitsQueue = Schema.makeFilter((settings: Pick<QueueSettings, "queueSize" | "batchSize">) =>
  settings.batchSize > settings.queueSize ? { path: ["batchSize"], issue: "must not exceed queueSize" } : undefined,
)
