import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { formatGoDuration, parseGoDuration, parseGoDurationNanos } from "../../src/config/GoDuration.ts"

const millis = (text: string): number => Result.getOrThrow(parseGoDuration(text))
const failure = (text: string): string | undefined => {
  const parsed = parseGoDuration(text)
  return Result.isFailure(parsed) ? parsed.failure : undefined
}

describe("parseGoDuration", () => {
  it.each([
    ["0", 0],
    ["-0", 0],
    ["+0", 0],
    ["0s", 0],
    ["300ms", 300],
    ["30s", 30_000],
    ["1m30s", 90_000],
    ["1.5h", 5_400_000],
    ["2h45m", 9_900_000],
    ["-1.5h", -5_400_000],
    ["+5s", 5_000],
    [".5s", 500],
    ["1.s", 1_000],
    ["1h1m1s1ms", 3_661_001],
    ["1s1s", 2_000],
    ["1500us", 1.5],
    ["1500µs", 1.5],
    ["1500μs", 1.5],
    ["250ns", 0.00025],
    ["1.000000001s", 1000.000001],
  ])("reads %s as %d ms", (text, expected) => {
    expect(millis(text)).toBe(expected)
  })

  it.each([
    ["", 'invalid duration ""'],
    ["1", 'missing unit in duration "1"'],
    ["30", 'missing unit in duration "30"'],
    ["1x", 'unknown unit "x" in duration "1x"'],
    ["1 s", 'unknown unit " s" in duration "1 s"'],
    ["1d", 'unknown unit "d" in duration "1d"'],
    ["1S", 'unknown unit "S" in duration "1S"'],
    ["s", 'invalid duration "s"'],
    [".s", 'invalid duration ".s"'],
    ["-", 'invalid duration "-"'],
    ["1h-1m", 'unknown unit "h-" in duration "1h-1m"'],
    ["abc", 'invalid duration "abc"'],
    ["9223372036854775808ns", 'invalid duration "9223372036854775808ns"'],
    ["3000000h", 'invalid duration "3000000h"'],
  ])("rejects %j with Go's message", (text, message) => {
    expect(failure(text)).toBe(message)
  })

  it("keeps nanosecond precision up to Go's int64 limit", () => {
    expect(Result.getOrThrow(parseGoDurationNanos("9223372036854775807ns"))).toBe(9223372036854775807n)
    expect(Result.getOrThrow(parseGoDurationNanos("-9223372036854775808ns"))).toBe(-9223372036854775808n)
    expect(Result.getOrThrow(parseGoDurationNanos("2562047h47m16.854775807s"))).toBe(9223372036854775807n)
  })
})

describe("formatGoDuration", () => {
  it.each([
    [0, "0s"],
    [30_000, "30s"],
    [90_000, "1m30s"],
    [3_600_000, "1h"],
    [5_400_000, "1h30m"],
    [3_600_500, "1h0.5s"],
    [300, "300ms"],
    [1_500, "1.5s"],
    [1.5, "1.5ms"],
    [0.0015, "1.5µs"],
    [0.00025, "250ns"],
    [-5_400_000, "-1h30m"],
  ])("writes %d ms as %s", (value, text) => {
    expect(formatGoDuration(value)).toBe(text)
  })

  it("writes what it reads", () => {
    for (const text of ["1m30s", "2h45m", "1.5h", "300ms", "1.5µs", "1h0.001s", "25h"]) {
      const value = millis(text)
      expect(millis(formatGoDuration(value))).toBe(value)
    }
  })
})
