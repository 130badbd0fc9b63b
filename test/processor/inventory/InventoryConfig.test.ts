import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { factory } from "../../../src/processor/inventory/InventoryProcessor.ts"

const { defaultConfig, validate } = factory

const publishedLimits = { retiredPagesLimit: 63, remappedRowsLimit: 512, volatileUncorrectableLimit: 0 }

describe("inventory processor config", () => {
  it("defaults to a report every hour and five minutes of grace", () => {
    expect(defaultConfig).toEqual({
      reportIntervalMs: 3_600_000,
      removalGraceMs: 300_000,
      store: "memory",
      health: publishedLimits,
    })
    expect(validate(undefined)).toEqual(Result.succeed(defaultConfig))
    expect(validate(null)).toEqual(Result.succeed(defaultConfig))
  })

  it("reads Go durations; 0 turns reports off", () => {
    expect(validate({ reportInterval: "1h30m", removalGrace: "90s", store: "nats" })).toEqual(
      Result.succeed({ reportIntervalMs: 5_400_000, removalGraceMs: 90_000, store: "nats", health: publishedLimits }),
    )
    expect(validate({ reportInterval: 0, removalGrace: "2.5s" })).toEqual(
      Result.succeed({ reportIntervalMs: 0, removalGraceMs: 2500, store: "memory", health: publishedLimits }),
    )
    expect(validate({ reportInterval: "0" })).toEqual(Result.succeed({ ...defaultConfig, reportIntervalMs: 0 }))
  })

  it("reports every problem at once, by key", () => {
    const outcome = validate({ reportInterval: "-1s", removalGrace: "soon", removalDelay: "5m" })
    expect(Result.isFailure(outcome)).toBe(true)
    if (Result.isSuccess(outcome)) return
    const keys = outcome.failure.map((problem) => problem.key).sort()
    expect(keys).toEqual(["removalDelay", "removalGrace", "reportInterval"])
    expect(outcome.failure.find((problem) => problem.key === "reportInterval")?.message).toMatch(/must be >= 0/)
    expect(outcome.failure.find((problem) => problem.key === "removalDelay")?.message).toBe("unknown key")
  })

  it("refuses durations beyond the ranges of REPORT_INTERVAL and REMOVAL_GRACE", () => {
    const outcome = validate({ reportInterval: "600h", removalGrace: "200h" })
    expect(Result.isFailure(outcome) ? outcome.failure : []).toEqual([
      { key: "reportInterval", message: "report interval must be 0 (disabled) or between 1s and 168h, got 600h" },
      { key: "removalGrace", message: "removal grace must be between 0s and 168h, got 200h" },
    ])
  })

  it("reads the health verdict's limits, published values by default, and refuses them out of range by key", () => {
    expect(
      validate({ healthRetiredPagesLimit: 32, healthRemappedRowsLimit: "128", healthVolatileUncorrectableLimit: 3 }),
    ).toEqual(
      Result.succeed({
        ...defaultConfig,
        health: { retiredPagesLimit: 32, remappedRowsLimit: 128, volatileUncorrectableLimit: 3 },
      }),
    )
    const outcome = validate({
      healthRetiredPagesLimit: 0,
      healthRemappedRowsLimit: "many",
      healthVolatileUncorrectableLimit: -1,
    })
    const problems = Result.isFailure(outcome) ? outcome.failure : []
    expect(problems.map((problem) => problem.key).sort()).toEqual([
      "healthRemappedRowsLimit",
      "healthRetiredPagesLimit",
      "healthVolatileUncorrectableLimit",
    ])
    expect(problems.find((problem) => problem.key === "healthRetiredPagesLimit")?.message).toBe(
      "health retired pages limit must be between 1 and 4096, got 0",
    )
    expect(problems.find((problem) => problem.key === "healthVolatileUncorrectableLimit")?.message).toMatch(
      /^health volatile uncorrectable limit must be between 0 and 1000000/,
    )
  })
})
