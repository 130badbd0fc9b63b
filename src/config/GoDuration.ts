import * as Result from "effect/Result"

/**
 * Durations in the syntax of Go's `time.ParseDuration` (`300ms`, `1.5h`, `1m30s`, `-1.5h`), so that the
 * Go original's values (`TIMEOUT=30s`, `RESYNC=0`) keep working. Values are milliseconds; sub-millisecond
 * precision stays as a fraction.
 */

const NANOS_PER_UNIT: ReadonlyMap<string, bigint> = new Map([
  ["ns", 1n],
  ["us", 1_000n],
  ["µs", 1_000n], // U+00B5 micro sign
  ["μs", 1_000n], // U+03BC Greek mu
  ["ms", 1_000_000n],
  ["s", 1_000_000_000n],
  ["m", 60_000_000_000n],
  ["h", 3_600_000_000_000n],
])

/** Go's Duration is an int64 of nanoseconds. */
const MAX_NANOS = (1n << 63n) - 1n
const NANOS_PER_MILLI = 1_000_000n

const quote = (text: string): string => JSON.stringify(text)

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9"

/** Parses Go duration text to nanoseconds; the error text matches Go's, without its `time: ` prefix. */
export const parseGoDurationNanos = (text: string): Result.Result<bigint, string> => {
  const invalid = Result.fail(`invalid duration ${quote(text)}`)
  let rest = text
  let negative = false
  if (rest.startsWith("-") || rest.startsWith("+")) {
    negative = rest.startsWith("-")
    rest = rest.slice(1)
  }
  if (rest === "0") return Result.succeed(0n)
  if (rest === "") return invalid
  let total = 0n
  while (rest !== "") {
    if (!(rest[0] === "." || isDigit(rest[0]))) return invalid
    let i = 0
    while (isDigit(rest[i])) i++
    const wholeDigits = rest.slice(0, i)
    rest = rest.slice(i)
    let fractionDigits = ""
    if (rest.startsWith(".")) {
      rest = rest.slice(1)
      let j = 0
      while (isDigit(rest[j])) j++
      fractionDigits = rest.slice(0, j)
      rest = rest.slice(j)
    }
    if (wholeDigits === "" && fractionDigits === "") return invalid
    let u = 0
    while (u < rest.length && rest[u] !== "." && !isDigit(rest[u])) u++
    if (u === 0) return Result.fail(`missing unit in duration ${quote(text)}`)
    const unitName = rest.slice(0, u)
    rest = rest.slice(u)
    const unit = NANOS_PER_UNIT.get(unitName)
    if (unit === undefined) return Result.fail(`unknown unit ${quote(unitName)} in duration ${quote(text)}`)
    const whole = wholeDigits === "" ? 0n : BigInt(wholeDigits)
    if (whole > MAX_NANOS + 1n) return invalid
    let value = whole * unit
    if (value > MAX_NANOS + 1n) return invalid
    if (fractionDigits !== "") {
      // Go keeps at most the digits that fit an int64 and scales them in floating point.
      const kept = fractionDigits.slice(0, 18)
      const fraction = Number(kept)
      const scale = 10 ** kept.length
      value += BigInt(Math.trunc(fraction * (Number(unit) / scale)))
      if (value > MAX_NANOS + 1n) return invalid
    }
    total += value
    if (total > MAX_NANOS + 1n) return invalid
  }
  if (negative) return Result.succeed(-total)
  if (total > MAX_NANOS) return invalid
  return Result.succeed(total)
}

/** Parses Go duration text to milliseconds. */
export const parseGoDuration = (text: string): Result.Result<number, string> =>
  Result.map(parseGoDurationNanos(text), (nanos) => nanosToMillis(nanos))

const nanosToMillis = (nanos: bigint): number => {
  const whole = nanos / NANOS_PER_MILLI
  const rest = nanos % NANOS_PER_MILLI
  return Number(whole) + Number(rest) / 1e6
}

const millisToNanos = (millis: number): bigint => {
  const whole = Math.trunc(millis)
  return BigInt(whole) * NANOS_PER_MILLI + BigInt(Math.round((millis - whole) * 1e6))
}

/** `value / unit` with the remainder as decimals and trailing zeros removed (`1500000, 1000000` → `1.5`). */
const decimal = (value: bigint, unit: bigint): string => {
  const whole = value / unit
  const rest = value % unit
  if (rest === 0n) return whole.toString()
  const width = unit.toString().length - 1
  return `${whole}.${rest.toString().padStart(width, "0").replace(/0+$/, "")}`
}

/**
 * Formats milliseconds in Go syntax, the way Go's `Duration.String` does but with zero components
 * left out (`1h` rather than `1h0m0s`, `1m30s`, `300ms`, `0s`); Go's `ParseDuration` reads every result back.
 */
export const formatGoDuration = (millis: number): string => {
  const nanos = millisToNanos(millis)
  if (nanos === 0n) return "0s"
  const sign = nanos < 0n ? "-" : ""
  const size = nanos < 0n ? -nanos : nanos
  if (size < 1_000n) return `${sign}${size}ns`
  if (size < 1_000_000n) return `${sign}${decimal(size, 1_000n)}µs`
  if (size < 1_000_000_000n) return `${sign}${decimal(size, 1_000_000n)}ms`
  const hours = size / 3_600_000_000_000n
  const minutes = (size % 3_600_000_000_000n) / 60_000_000_000n
  const seconds = size % 60_000_000_000n
  const parts = [
    hours > 0n ? `${hours}h` : "",
    minutes > 0n ? `${minutes}m` : "",
    seconds > 0n ? `${decimal(seconds, 1_000_000_000n)}s` : "",
  ]
  return sign + parts.join("")
}
