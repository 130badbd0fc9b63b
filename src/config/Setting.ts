import * as Result from "effect/Result"
import type { SettingValues } from "./ResolveSettings.ts"
import { type Bounds, outOfBoundsMessage, withinBounds } from "./SettingBounds.ts"
import type { SettingType } from "./SettingType.ts"

/**
 * How a secret is kept out of printed config and messages: `value` hides the whole value (for a
 * key=value list, every value), `userinfo` hides the credentials and query values of a URL (`https://<redacted>@host`).
 */
export type Secrecy = "none" | "value" | "userinfo"

/**
 * One setting: where it lives in its section of the config file, its environment variable and flag,
 * its type, default, rule and the message a user reads when the rule is broken.
 *
 * `key` is relative to the section that declares the setting: a component's settings are keyed within
 * its section (`exporters.stdout.queueSize` has key `queueSize`), and their environment variable and flag apply to
 * every component of that type in the pipeline; the service's own settings are keyed from the root.
 */
export interface Setting<T> {
  readonly key: string
  readonly env?: string
  readonly flag?: string
  readonly type: SettingType<T>
  /** Absent when the setting is optional and has no default. */
  readonly default?: T
  /**
   * A default that depends on settings listed before it in the same scope (`DISCOVERY=dra` changes the
   * receiver's namespace); `undefined` keeps `default`. A value set by flag, environment or file wins.
   */
  readonly defaultFrom?: (values: SettingValues) => T | undefined
  readonly secret: Secrecy
  /** The noun messages start with (`workers`, `resync period`). */
  readonly label: string
  readonly description: string
  /** The rule: says what is wrong with a value that was read, in the words the user will see. */
  check?(value: T): string | undefined
  /** The range of a numeric setting, checked after the rule (which keeps the Go original's messages). */
  readonly bounds?: Bounds
  /** Replaces the type's message when the value cannot be read at all. */
  readonly unreadable?: string
  /**
   * Whether an empty environment variable is a value (the Go original reads `CLUSTER_NAME=` as an empty
   * name) rather than "not set" (it reads `WORKERS=` as the default).
   */
  readonly emptyEnvIsValue?: boolean
}

/** A setting of any type, as a component lists them (the rule and formatter are read with its own values only). */
export type AnySetting = Setting<unknown>

/** What is wrong with a value that was read: the setting's rule, then its range; range messages start with `label`. */
export const valueProblem = (setting: AnySetting, value: unknown, label = setting.label): string | undefined => {
  const problem = setting.check?.(value)
  if (problem !== undefined || setting.bounds === undefined || typeof value !== "number") return problem
  if (withinBounds(setting.bounds, value)) return undefined
  const format = (bound: number): string => String(setting.type.format(bound))
  return outOfBoundsMessage(label, setting.bounds, format, value, setting.secret === "none")
}

/**
 * Reads a setting's value from text outside the settings' own flags (`parse --max-bytes 8Mi`), with the
 * setting's type, rule and range; messages start with `label`.
 */
export const settingFromText = <T>(
  setting: Setting<T>,
  text: string,
  label = setting.label,
): Result.Result<T, string> => {
  const read = setting.type.fromText(text, setting.secret === "none")
  if (Result.isFailure(read)) return Result.fail(`${label} ${read.failure}`)
  const problem = valueProblem(setting, read.success, label)
  return problem === undefined ? Result.succeed(read.success) : Result.fail(problem)
}
