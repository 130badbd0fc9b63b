import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Predicate from "effect/Predicate"
import * as References from "effect/References"
import { redactUrlsIn } from "./UrlRedaction.ts"

/** The levels `LOG_LEVEL` accepts. */
export const logLevelNames = ["debug", "info", "warn", "error"] as const
export type LogLevelName = (typeof logLevelNames)[number]

/** Where log lines go: stderr in the service (stdout carries records); tests pass their own. */
export interface LogOutput {
  readonly write: (line: string) => unknown
}

/** Every string in a log line is cut to this many characters, so no payload is ever dumped. */
export const maxStringLength = 512

const maxDepth = 3
const maxEntries = 20

/** Keys every line has; an annotation with one of these names is written as `fields.<name>`. */
export const reservedKeys: ReadonlySet<string> = new Set(["time", "level", "msg", "error"])

const effectLevels: Readonly<Record<LogLevelName, LogLevel.LogLevel>> = {
  debug: "Debug",
  info: "Info",
  warn: "Warn",
  error: "Error",
}

/** A string as a line may hold it: URLs redacted (before cutting, so no cut URL escapes), then cut. */
const cap = (text: string): string => {
  const redacted = redactUrlsIn(text)
  return redacted.length > maxStringLength ? `${redacted.slice(0, maxStringLength - 1)}…` : redacted
}

const errorText = (error: unknown): string => {
  if (Predicate.hasProperty(error, "_tag") && Predicate.isString(error._tag)) {
    const message = Predicate.hasProperty(error, "message") && Predicate.isString(error.message) ? error.message : ""
    return message === "" ? error._tag : `${error._tag}: ${message}`
  }
  if (error instanceof Error) return `${error.name}: ${error.message}`
  return Predicate.isString(error) ? error : (JSON.stringify(fieldValue(error, 1)) ?? String(error))
}

const causeText = (cause: Cause.Cause<unknown>): string =>
  cap(
    cause.reasons
      .map((reason) => {
        if (Cause.isFailReason(reason)) return errorText(reason.error)
        if (Cause.isDieReason(reason)) return errorText(reason.defect)
        return "interrupted"
      })
      .join("; "),
  )

/** A JSON-safe, bounded copy of a value: short strings, few entries, shallow nesting. */
const fieldValue = (value: unknown, depth: number): unknown => {
  if (value === null || Predicate.isBoolean(value)) return value
  if (Predicate.isString(value)) return cap(value)
  if (Predicate.isNumber(value)) return Number.isFinite(value) ? value : String(value)
  if (Predicate.isBigInt(value)) return value.toString()
  if (value === undefined || Predicate.isFunction(value) || Predicate.isSymbol(value)) return undefined
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? "Invalid Date" : value.toISOString()
  if (Duration.isDuration(value)) return Duration.format(value)
  if (Cause.isCause(value)) return causeText(value)
  if (value instanceof Error) return cap(errorText(value))
  if (depth >= maxDepth) return "[…]"
  if (Array.isArray(value)) {
    const items = value.slice(0, maxEntries).map((item) => fieldValue(item, depth + 1) ?? null)
    return value.length > maxEntries ? [...items, `… ${value.length - maxEntries} more`] : items
  }
  if (Predicate.hasProperty(value, "toJSON") && Predicate.isFunction(value.toJSON)) {
    return fieldValue(value.toJSON(), depth + 1)
  }
  if (Predicate.isObject(value)) {
    const copy: Record<string, unknown> = {}
    const keys = Object.keys(value)
    for (const key of keys.slice(0, maxEntries)) {
      const entry = fieldValue(value[key], depth + 1)
      if (entry !== undefined) copy[key] = entry
    }
    if (keys.length > maxEntries) copy["…"] = `${keys.length - maxEntries} more`
    return copy
  }
  return cap(String(value))
}

const messageText = (message: unknown): string => {
  const parts = Array.isArray(message) ? message : [message]
  return cap(
    parts
      .map((part) => {
        if (Predicate.isString(part)) return part
        const value = fieldValue(part, 1)
        return Predicate.isString(value) ? value : (JSON.stringify(value) ?? "")
      })
      .join(" "),
  )
}

const freeKey = (event: Record<string, unknown>, key: string): string => {
  let candidate = key
  while (reservedKeys.has(candidate) || Object.hasOwn(event, candidate)) candidate = `fields.${candidate}`
  return candidate
}

/** The JSON object of one log event: `time`, `level`, `msg`, `error` when there is a cause, then annotations. */
export const logEvent = (options: Logger.Options<unknown>): Record<string, unknown> => {
  const event: Record<string, unknown> = {
    time: options.date.toISOString(),
    level: options.logLevel.toLowerCase(),
    msg: messageText(options.message),
  }
  if (options.cause.reasons.length > 0) event.error = causeText(options.cause)
  const annotations = options.fiber.getRef(References.CurrentLogAnnotations)
  for (const [key, value] of Object.entries(annotations)) {
    const field = fieldValue(value, 1)
    if (field !== undefined) event[freeKey(event, key)] = field
  }
  return event
}

/** A logger writing one JSON object per line to `output`, for events at `level` or above. */
export const make = (output: LogOutput, level: LogLevelName): Logger.Logger<unknown, void> => {
  const minimum = effectLevels[level]
  return Logger.make((options) => {
    if (LogLevel.isLessThan(options.logLevel, minimum)) return
    output.write(`${JSON.stringify(logEvent(options))}\n`)
  })
}

export interface JsonLoggerOptions {
  readonly level: LogLevelName
  /** `process.stderr` unless given. */
  readonly output?: LogOutput
}

/**
 * Replaces every logger (Effect's default one writes to stdout) with the JSON logger and sets the
 * minimum level, so `Effect.logDebug` and friends are filtered before any work is done.
 */
export const layer = (options: JsonLoggerOptions): Layer.Layer<never> =>
  Layer.mergeAll(
    Logger.layer([make(options.output ?? process.stderr, options.level)]),
    Layer.succeed(References.MinimumLogLevel, effectLevels[options.level]),
  )
