import * as Duration from "effect/Duration"
import type { SettingRule, SettingValues } from "../../config/ResolveSettings.ts"
import type { AnySetting, Setting } from "../../config/Setting.ts"
import type { Bounds } from "../../config/SettingBounds.ts"
import { floatType, intType, millisType, type SettingType } from "../../config/SettingType.ts"

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

/** The range of each common setting: a queue holds records in memory, and every delay must fit a timer. */
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

type Rule = (label: string) => (value: number) => string | undefined

const positiveInteger: Rule = (label) => (value) => (value > 0 ? undefined : `${label} must be a positive integer`)

const nonNegativeInteger: Rule = (label) => (value) =>
  value >= 0 ? undefined : `${label} must be 0 or a positive integer`

const positiveDuration: Rule = (label) => (value) =>
  Number.isFinite(value) && value > 0 ? undefined : `${label} must be a positive duration`

/** The queue and retry settings as rows of an exporter's settings. */
interface QueueSettingRows {
  readonly queueSize: Setting<number>
  readonly batchSize: Setting<number>
  readonly writeTimeout: Setting<number>
  readonly initialInterval: Setting<number>
  readonly maxInterval: Setting<number>
  readonly multiplier: Setting<number>
  readonly randomizationFactor: Setting<number>
  readonly maxAttempts: Setting<number>
  readonly maxElapsed: Setting<number>
}

interface QueueSettingRow {
  readonly key: string
  readonly label: string
  readonly value: number
  readonly bounds: Bounds
  readonly description: string
}

/** Rows of one value type and rule. */
const rowsOf =
  (type: SettingType<number>, rule: Rule | undefined) =>
  (row: QueueSettingRow): Setting<number> => ({
    key: row.key,
    type,
    default: row.value,
    secret: "none",
    label: row.label,
    description: row.description,
    ...(rule === undefined ? {} : { check: rule(row.label) }),
    bounds: row.bounds,
  })

const makeQueueSettingRows = (): QueueSettingRows => {
  const retry = defaultQueueSettings.retry
  const count = rowsOf(intType, positiveInteger)
  const factor = rowsOf(floatType, undefined)
  const duration = rowsOf(millisType, positiveDuration)
  return {
    queueSize: count({
      key: "queueSize",
      label: "queue size",
      value: defaultQueueSettings.queueSize,
      bounds: queueSettingsBounds.queueSize,
      description: "Records held at most (waiting and being written); more are dropped and counted. Config file only.",
    }),
    batchSize: count({
      key: "batchSize",
      label: "batch size",
      value: defaultQueueSettings.batchSize,
      bounds: queueSettingsBounds.batchSize,
      description: "Records written in one write at most; not more than queueSize. Config file only.",
    }),
    writeTimeout: duration({
      key: "writeTimeout",
      label: "write timeout",
      value: Duration.toMillis(defaultQueueSettings.writeTimeout),
      bounds: queueSettingsBounds.writeTimeout,
      description: "Deadline of one write attempt. Config file only.",
    }),
    initialInterval: duration({
      key: "retry.initialInterval",
      label: "retry initial interval",
      value: Duration.toMillis(retry.initialInterval),
      bounds: queueSettingsBounds.initialInterval,
      description:
        "Backoff before the first retry, grown by retry.multiplier on each retry; not more than retry.maxInterval. Config file only.",
    }),
    maxInterval: duration({
      key: "retry.maxInterval",
      label: "retry max interval",
      value: Duration.toMillis(retry.maxInterval),
      bounds: queueSettingsBounds.maxInterval,
      description:
        "Longest wait between two attempts, also when the sink asks for a longer one (Retry-After). Config file only.",
    }),
    multiplier: factor({
      key: "retry.multiplier",
      label: "retry multiplier",
      value: retry.multiplier,
      bounds: queueSettingsBounds.multiplier,
      description: "Factor the backoff grows by on each retry. Config file only.",
    }),
    randomizationFactor: factor({
      key: "retry.randomizationFactor",
      label: "retry randomization factor",
      value: retry.randomizationFactor,
      bounds: queueSettingsBounds.randomizationFactor,
      description: "Each wait is the backoff ± this fraction of it, at random. Config file only.",
    }),
    maxAttempts: rowsOf(
      intType,
      nonNegativeInteger,
    )({
      key: "retry.maxAttempts",
      label: "retry max attempts",
      value: retry.maxAttempts,
      bounds: queueSettingsBounds.maxAttempts,
      description:
        "Write attempts per batch, the first included; 1 disables retries, 0 leaves them to retry.maxElapsed. Config file only.",
    }),
    maxElapsed: duration({
      key: "retry.maxElapsed",
      label: "retry max elapsed",
      value: Duration.toMillis(retry.maxElapsed),
      bounds: queueSettingsBounds.maxElapsed,
      description:
        "A batch still failing this long after its first attempt is dropped; the last retry starts by then. Config file only.",
    }),
  }
}

/**
 * The queue and retry settings every exporter's section carries (the Collector's `sending_queue` and
 * `retry_on_failure` in one): keys of the exporter's section, config file only.
 */
const settings: QueueSettingRows = makeQueueSettingRows()

/** The queue settings as a list, in the order of the configuration reference, to spread into an exporter's settings. */
export const queueSettingList: ReadonlyArray<AnySetting> = [
  settings.queueSize,
  settings.batchSize,
  settings.writeTimeout,
  settings.initialInterval,
  settings.maxInterval,
  settings.multiplier,
  settings.randomizationFactor,
  settings.maxAttempts,
  settings.maxElapsed,
]

/** A batch fits in the queue, and the first retry waits no longer than any retry may. */
export const queueSettingsRule: SettingRule = (values) => {
  const problems: Array<{ setting: AnySetting; message: string }> = []
  const queueSize = values.get(settings.queueSize)
  const batchSize = values.get(settings.batchSize)
  if (queueSize !== undefined && batchSize !== undefined && batchSize > queueSize) {
    problems.push({ setting: settings.batchSize, message: "batch size must not exceed queueSize" })
  }
  const initial = values.get(settings.initialInterval)
  const max = values.get(settings.maxInterval)
  if (initial !== undefined && max !== undefined && initial > max) {
    problems.push({
      setting: settings.initialInterval,
      message: "retry initial interval must not be longer than retry.maxInterval",
    })
  }
  return problems
}

/** The resolved queue settings, once resolution found no problems. */
export const queueSettingsOf = (values: SettingValues): QueueSettings => ({
  queueSize: values.require(settings.queueSize),
  batchSize: values.require(settings.batchSize),
  writeTimeout: Duration.millis(values.require(settings.writeTimeout)),
  retry: {
    initialInterval: Duration.millis(values.require(settings.initialInterval)),
    maxInterval: Duration.millis(values.require(settings.maxInterval)),
    multiplier: values.require(settings.multiplier),
    randomizationFactor: values.require(settings.randomizationFactor),
    maxAttempts: values.require(settings.maxAttempts),
    maxElapsed: Duration.millis(values.require(settings.maxElapsed)),
  },
})
