import { Duration } from "effect"
import { defaultQueueSettings, type QueueSettings, queueSettingsBounds } from "./QueueSettings.ts"
import type { SettingRule, SettingValues } from "./ResolveSettings.ts"
import type { AnySetting, Setting } from "./Setting.ts"
import type { Bounds } from "./SettingBounds.ts"
import { floatType, intType, millisType, type SettingType } from "./SettingType.ts"

/**
 * The queue and retry settings of a built-in exporter that writes through the common queue, as rows of
 * the settings table: file-only keys of its section, with the defaults and rules of the `stdout` section.
 */
export interface ExporterQueueSettings {
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

type Rule = (label: string) => (value: number) => string | undefined

const positiveInteger: Rule = (label) => (value) => (value > 0 ? undefined : `${label} must be a positive integer`)

const nonNegativeInteger: Rule = (label) => (value) =>
  value >= 0 ? undefined : `${label} must be 0 or a positive integer`

const positiveDuration: Rule = (label) => (value) =>
  Number.isFinite(value) && value > 0 ? undefined : `${label} must be a positive duration`

interface QueueSettingRow {
  readonly key: string
  readonly label: string
  readonly value: number
  readonly bounds: Bounds
  readonly description: string
}

/** Rows of one value type and rule for the section of `exporter`. */
const rowsOf =
  (exporter: string, type: SettingType<number>, rule: Rule | undefined) =>
  (row: QueueSettingRow): Setting<number> => ({
    key: row.key,
    exporter,
    type,
    default: row.value,
    secret: "none",
    label: row.label,
    description: row.description,
    ...(rule === undefined ? {} : { check: rule(row.label) }),
    bounds: row.bounds,
  })

/** The queue settings of the built-in exporter type `exporter`. */
export const exporterQueueSettings = (exporter: string): ExporterQueueSettings => {
  const retry = defaultQueueSettings.retry
  const count = rowsOf(exporter, intType, positiveInteger)
  const factor = rowsOf(exporter, floatType, undefined)
  const duration = rowsOf(exporter, millisType, positiveDuration)
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
      exporter,
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

/** The queue settings as a list, in the order of the configuration reference. */
export const exporterQueueSettingList = (settings: ExporterQueueSettings): ReadonlyArray<AnySetting> => [
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
export const exporterQueueRule =
  (settings: ExporterQueueSettings): SettingRule =>
  (values) => {
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
export const exporterQueueSettingsOf = (values: SettingValues, settings: ExporterQueueSettings): QueueSettings => ({
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
