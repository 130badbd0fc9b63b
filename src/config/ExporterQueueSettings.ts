import { Duration } from "effect"
import { defaultQueueSettings, type QueueSettings, queueSettingsBounds } from "./QueueSettings.ts"
import type { SettingRule, SettingValues } from "./ResolveSettings.ts"
import type { AnySetting, Setting } from "./Setting.ts"
import type { Bounds } from "./SettingBounds.ts"
import { floatType, intType, millisType } from "./SettingType.ts"

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

const positiveInteger =
  (label: string) =>
  (value: number): string | undefined =>
    value > 0 ? undefined : `${label} must be a positive integer`

const nonNegativeInteger =
  (label: string) =>
  (value: number): string | undefined =>
    value >= 0 ? undefined : `${label} must be 0 or a positive integer`

const positiveDuration =
  (label: string) =>
  (value: number): string | undefined =>
    Number.isFinite(value) && value > 0 ? undefined : `${label} must be a positive duration`

const countSetting = (
  exporter: string,
  key: string,
  label: string,
  value: number,
  bounds: Bounds,
  description: string,
) =>
  ({
    key,
    exporter,
    type: intType,
    default: value,
    secret: "none",
    label,
    description,
    check: positiveInteger(label),
    bounds,
  }) satisfies Setting<number>

const factorSetting = (
  exporter: string,
  key: string,
  label: string,
  value: number,
  bounds: Bounds,
  description: string,
) =>
  ({
    key,
    exporter,
    type: floatType,
    default: value,
    secret: "none",
    label,
    description,
    bounds,
  }) satisfies Setting<number>

const durationSetting = (
  exporter: string,
  key: string,
  label: string,
  value: Duration.Duration,
  bounds: Bounds,
  description: string,
) =>
  ({
    key,
    exporter,
    type: millisType,
    default: Duration.toMillis(value),
    secret: "none",
    label,
    description,
    check: positiveDuration(label),
    bounds,
  }) satisfies Setting<number>

/** The queue settings of the built-in exporter type `exporter`. */
export const exporterQueueSettings = (exporter: string): ExporterQueueSettings => {
  const retry = defaultQueueSettings.retry
  return {
    queueSize: countSetting(
      exporter,
      "queueSize",
      "queue size",
      defaultQueueSettings.queueSize,
      queueSettingsBounds.queueSize,
      "Records held at most (waiting and being written); more are dropped and counted. Config file only.",
    ),
    batchSize: countSetting(
      exporter,
      "batchSize",
      "batch size",
      defaultQueueSettings.batchSize,
      queueSettingsBounds.batchSize,
      "Records written in one write at most; not more than queueSize. Config file only.",
    ),
    writeTimeout: durationSetting(
      exporter,
      "writeTimeout",
      "write timeout",
      defaultQueueSettings.writeTimeout,
      queueSettingsBounds.writeTimeout,
      "Deadline of one write attempt. Config file only.",
    ),
    initialInterval: durationSetting(
      exporter,
      "retry.initialInterval",
      "retry initial interval",
      retry.initialInterval,
      queueSettingsBounds.initialInterval,
      "Backoff before the first retry, grown by retry.multiplier on each retry; not more than retry.maxInterval. Config file only.",
    ),
    maxInterval: durationSetting(
      exporter,
      "retry.maxInterval",
      "retry max interval",
      retry.maxInterval,
      queueSettingsBounds.maxInterval,
      "Longest wait between two attempts, also when the sink asks for a longer one (Retry-After). Config file only.",
    ),
    multiplier: factorSetting(
      exporter,
      "retry.multiplier",
      "retry multiplier",
      retry.multiplier,
      queueSettingsBounds.multiplier,
      "Factor the backoff grows by on each retry. Config file only.",
    ),
    randomizationFactor: factorSetting(
      exporter,
      "retry.randomizationFactor",
      "retry randomization factor",
      retry.randomizationFactor,
      queueSettingsBounds.randomizationFactor,
      "Each wait is the backoff ± this fraction of it, at random. Config file only.",
    ),
    maxAttempts: {
      ...countSetting(
        exporter,
        "retry.maxAttempts",
        "retry max attempts",
        retry.maxAttempts,
        queueSettingsBounds.maxAttempts,
        "Write attempts per batch, the first included; 1 disables retries, 0 leaves them to retry.maxElapsed. Config file only.",
      ),
      check: nonNegativeInteger("retry max attempts"),
    },
    maxElapsed: durationSetting(
      exporter,
      "retry.maxElapsed",
      "retry max elapsed",
      retry.maxElapsed,
      queueSettingsBounds.maxElapsed,
      "A batch still failing this long after its first attempt is dropped; the last retry starts by then. Config file only.",
    ),
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
