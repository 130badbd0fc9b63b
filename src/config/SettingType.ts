import * as Result from "effect/Result"
import { formatByteSize, parseByteSize } from "./ByteSize.ts"
import { formatGoDuration, parseGoDuration } from "./GoDuration.ts"

/** A value as the config file writes it. */
export type FileValue = string | number | boolean | ReadonlyArray<string> | Readonly<Record<string, string>>

/**
 * How one kind of setting is read from text (environment variable or flag) and from a YAML value, and
 * written back in the config file. Errors are the end of a sentence that starts with the setting's label
 * (`workers` + ` must be an integer, got "x"`); `reveal` is false for secrets, whose values never appear.
 */
export interface SettingType<T> {
  /** For the configuration reference: `int`, `duration`, `debug|info|warn|error`. */
  readonly name: string
  readonly fromText: (text: string, reveal: boolean) => Result.Result<T, string>
  readonly fromFile: (value: unknown, reveal: boolean) => Result.Result<T, string>
  format(value: T): FileValue
}

const got = (text: string, reveal: boolean): string => (reveal ? `, got ${JSON.stringify(text)}` : "")

const describeYaml = (value: unknown): string =>
  Array.isArray(value) ? "a list" : value !== null && typeof value === "object" ? "a mapping" : typeof value

/** Scalars read as text so that `workers: 4` and `workers: "4"` mean the same. */
const scalarText = (value: unknown): string | undefined =>
  typeof value === "string"
    ? value
    : typeof value === "number" || typeof value === "boolean" || typeof value === "bigint"
      ? String(value)
      : undefined

const fromScalar =
  <T>(expected: string, fromText: (text: string, reveal: boolean) => Result.Result<T, string>) =>
  (value: unknown, reveal: boolean): Result.Result<T, string> => {
    const text = scalarText(value)
    return text === undefined ? Result.fail(`must be ${expected}, got ${describeYaml(value)}`) : fromText(text, reveal)
  }

export const stringType: SettingType<string> = {
  name: "string",
  fromText: (text) => Result.succeed(text),
  fromFile: fromScalar("a string", (text) => Result.succeed(text)),
  format: (value) => value,
}

const INTEGER = /^[+-]?\d+$/

const intFromText = (text: string, reveal: boolean): Result.Result<number, string> => {
  const trimmed = text.trim()
  const value = Number(trimmed)
  return INTEGER.test(trimmed) && Number.isSafeInteger(value)
    ? Result.succeed(value)
    : Result.fail(`must be an integer${got(text, reveal)}`)
}

export const intType: SettingType<number> = {
  name: "int",
  fromText: intFromText,
  fromFile: fromScalar("an integer", intFromText),
  format: (value) => value,
}

const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

const floatFromText = (text: string, reveal: boolean): Result.Result<number, string> => {
  const trimmed = text.trim()
  const value = Number(trimmed)
  return FLOAT.test(trimmed) && Number.isFinite(value)
    ? Result.succeed(value)
    : Result.fail(`must be a number${got(text, reveal)}`)
}

export const floatType: SettingType<number> = {
  name: "float",
  fromText: floatFromText,
  fromFile: fromScalar("a number", floatFromText),
  format: (value) => value,
}

const durationFromText = (text: string): Result.Result<number, string> =>
  Result.mapError(parseGoDuration(text.trim()), (problem) => `must be a duration such as 30s or 1m30s: ${problem}`)

/** Go durations (`30s`, `1m30s`, `1.5h`, `0`), in milliseconds. */
export const durationType: SettingType<number> = {
  name: "duration",
  fromText: durationFromText,
  fromFile: fromScalar("a duration", durationFromText),
  format: formatGoDuration,
}

const millisFromText = (text: string): Result.Result<number, string> => {
  const trimmed = text.trim()
  return INTEGER.test(trimmed) ? Result.succeed(Number(trimmed)) : durationFromText(trimmed)
}

/** Milliseconds as a plain integer (as the OpenTelemetry variables write them) or a Go duration. */
export const millisType: SettingType<number> = {
  name: "milliseconds or duration",
  fromText: millisFromText,
  fromFile: fromScalar("milliseconds or a duration", millisFromText),
  format: formatGoDuration,
}

// The spellings Go's strconv.ParseBool accepts, so the Go original's values keep working.
const TRUE = new Set(["1", "t", "T", "true", "TRUE", "True"])
const FALSE = new Set(["0", "f", "F", "false", "FALSE", "False"])

const boolFromText = (text: string, reveal: boolean): Result.Result<boolean, string> => {
  const trimmed = text.trim()
  if (TRUE.has(trimmed)) return Result.succeed(true)
  if (FALSE.has(trimmed)) return Result.succeed(false)
  return Result.fail(`must be true or false${got(text, reveal)}`)
}

export const boolType: SettingType<boolean> = {
  name: "bool",
  fromText: boolFromText,
  fromFile: (value, reveal) =>
    typeof value === "boolean" ? Result.succeed(value) : fromScalar("true or false", boolFromText)(value, reveal),
  format: (value) => value,
}

/** One of a fixed set of words. */
export const enumType = <const Values extends ReadonlyArray<string>>(values: Values): SettingType<Values[number]> => {
  const fromText = (text: string, reveal: boolean): Result.Result<Values[number], string> => {
    const trimmed = text.trim()
    const match = values.find((value) => value === trimmed)
    return match === undefined
      ? Result.fail(`must be one of ${values.join(", ")}${got(text, reveal)}`)
      : Result.succeed(match)
  }
  return {
    name: values.join("|"),
    fromText,
    fromFile: fromScalar(`one of ${values.join(", ")}`, fromText),
    format: (value) => value,
  }
}

const listFromText = (text: string): Result.Result<ReadonlyArray<string>, string> =>
  Result.succeed(
    text
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item !== ""),
  )

/** A comma-separated list in text, a YAML sequence (or comma-separated string) in the file. */
export const listType: SettingType<ReadonlyArray<string>> = {
  name: "list",
  fromText: listFromText,
  fromFile: (value, reveal) => {
    if (!Array.isArray(value)) return fromScalar("a list", listFromText)(value, reveal)
    const items: Array<string> = []
    for (const item of value) {
      const text = scalarText(item)
      if (text === undefined) return Result.fail(`must be a list of words, got ${describeYaml(item)} in the list`)
      if (text.trim() !== "") items.push(text.trim())
    }
    return Result.succeed(items)
  },
  format: (value) => value,
}

const byteSizeFromText = (text: string): Result.Result<number, string> =>
  Result.mapError(parseByteSize(text), (problem) => `must be a byte size: ${problem}`)

/** Bytes, written plain or with a Kubernetes-style suffix (`8Mi`, `512Ki`). */
export const byteSizeType: SettingType<number> = {
  name: "bytes",
  fromText: byteSizeFromText,
  fromFile: fromScalar("a byte size", byteSizeFromText),
  format: formatByteSize,
}

const decodePercent = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/**
 * `key=value` pairs joined by commas with percent-encoded values, the format of the OpenTelemetry
 * standard OpenTelemetry variables of headers and resource attributes.
 */
const pairsFromText = (text: string, reveal: boolean): Result.Result<Readonly<Record<string, string>>, string> => {
  const pairs: Record<string, string> = {}
  for (const item of text.split(",")) {
    if (item.trim() === "") continue
    const equals = item.indexOf("=")
    const key = equals === -1 ? undefined : decodePercent(item.slice(0, equals).trim())
    const value = equals === -1 ? undefined : decodePercent(item.slice(equals + 1).trim())
    if (key === undefined || key === "" || value === undefined) {
      return Result.fail(`must be key=value pairs separated by commas${reveal ? `, got ${JSON.stringify(item)}` : ""}`)
    }
    pairs[key] = value
  }
  return Result.succeed(pairs)
}

export const pairsType: SettingType<Readonly<Record<string, string>>> = {
  name: "key=value list",
  fromText: pairsFromText,
  fromFile: (value, reveal) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      return fromScalar("a mapping or key=value list", pairsFromText)(value, reveal)
    }
    const pairs: Record<string, string> = {}
    for (const [key, item] of Object.entries(value)) {
      const text = scalarText(item)
      if (text === undefined) return Result.fail(`must map names to text, got ${describeYaml(item)} for ${key}`)
      pairs[key] = text
    }
    return Result.succeed(pairs)
  },
  format: (value) => value,
}
