import { Effect, Result, Schema, SchemaTransformation } from "effect"
import type { ConfigProblem } from "../../component/Component.ts"
import { sectionDefaults, sectionValidator } from "../../component/ConfigSection.ts"
import { formatGoDuration, parseGoDuration } from "../../config/GoDuration.ts"
import type { InventoryConfig } from "../../config/ServiceConfig.ts"
import { type Setting, valueProblem } from "../../config/Setting.ts"
import { removalGraceSetting, reportIntervalSetting } from "../../config/Settings.ts"
import { defaultRemovalGraceMs, defaultReportIntervalMs } from "./InventorySettings.ts"

/**
 * The `inventory` processor's config: the service's `InventoryConfig` (the report interval, which the
 * `REPORT_INTERVAL` setting also sets) and the grace period of nodes reported gone.
 */
export interface InventoryProcessorConfig extends InventoryConfig {
  /** How long a node whose device-plugin pod or node object is gone keeps its GPUs. */
  readonly removalGraceMs: number
}

const expectation = 'must be a duration such as "30s", "5m" or "1h", 0, or a number of milliseconds'

const millisOf = (text: string): number | undefined => {
  const parsed = parseGoDuration(text.trim())
  return Result.isSuccess(parsed) ? parsed.success : undefined
}

const isNotNegative = (millis: number | undefined): boolean =>
  millis !== undefined && Number.isFinite(millis) && millis >= 0

/** A duration of zero or more, written in Go syntax (`5m`) or as milliseconds; decoded to milliseconds. */
const NonNegativeDuration = Schema.Union([
  Schema.String.check(Schema.makeFilter((text: string) => isNotNegative(millisOf(text)), { message: expectation })),
  Schema.Number.check(Schema.makeFilter((millis: number) => isNotNegative(millis), { message: expectation })),
])
  .annotate({ message: expectation })
  .pipe(
    Schema.decodeTo(
      Schema.Number,
      SchemaTransformation.transform<number, string | number>({
        decode: (written) => (typeof written === "number" ? written : (millisOf(written) ?? 0)),
        encode: (millis) => formatGoDuration(millis),
      }),
    ),
  )

const withDefault = (millis: number) => NonNegativeDuration.pipe(Schema.withDecodingDefaultKey(Effect.succeed(millis)))

/** Within the range of its setting, with the message the config loader gives. */
const inRangeOf = (setting: Setting<number>) => Schema.makeFilter((millis: number) => valueProblem(setting, millis))

const InventorySection = Schema.Struct({
  /** 0 disables the periodic `observed` reports. */
  reportInterval: withDefault(defaultReportIntervalMs).check(inRangeOf(reportIntervalSetting)),
  /** 0 removes a gone node's GPUs at the next tick. */
  removalGrace: withDefault(defaultRemovalGraceMs).check(inRangeOf(removalGraceSetting)),
})

const configOf = (section: typeof InventorySection.Type): InventoryProcessorConfig => ({
  reportIntervalMs: section.reportInterval,
  removalGraceMs: section.removalGrace,
})

const validateSection = sectionValidator(InventorySection)

/** Checks a `processors.inventory` section; every problem at once, keyed `reportInterval` / `removalGrace`. */
export const validate = (section: unknown): Result.Result<InventoryProcessorConfig, ReadonlyArray<ConfigProblem>> =>
  Result.map(validateSection(section), configOf)

/** One hour of reports, five minutes of grace. */
export const defaultConfig: InventoryProcessorConfig = configOf(sectionDefaults(InventorySection))
