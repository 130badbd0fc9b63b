import { describe, expect, it } from "vitest"
import { SeededRandom } from "../../src/catalog/SeededRandom.ts"
import { parseDurationMs, parseLatency, sampleLatency } from "../../src/exec/ExecLatency.ts"

describe("exec latency", () => {
  it("parses fixed, uniform and log-normal latencies", () => {
    expect(parseLatency("200ms")).toEqual({ kind: "fixed", ms: 200 })
    expect(parseLatency("1.5s")).toEqual({ kind: "fixed", ms: 1500 })
    expect(parseLatency("100ms-300ms")).toEqual({ kind: "uniform", minMs: 100, maxMs: 300 })
    expect(parseLatency("p50=150ms,p99=1s")).toEqual({ kind: "lognormal", p50Ms: 150, p99Ms: 1000 })
    expect(() => parseDurationMs("soon")).toThrow(/invalid duration/)
  })

  it("draws a log-normal latency whose median and 99th percentile are the ones asked for", () => {
    const random = new SeededRandom("latency")
    const samples = Array.from({ length: 20_000 }, () =>
      sampleLatency({ kind: "lognormal", p50Ms: 200, p99Ms: 800 }, random),
    ).sort((a, b) => a - b)
    expect(samples[10_000]).toBeGreaterThan(185)
    expect(samples[10_000]).toBeLessThan(215)
    expect(samples[19_800]).toBeGreaterThan(700)
    expect(samples[19_800]).toBeLessThan(920)
  })

  it("keeps a uniform latency within its bounds", () => {
    const random = new SeededRandom(7)
    for (let index = 0; index < 1000; index++) {
      const sample = sampleLatency({ kind: "uniform", minMs: 100, maxMs: 300 }, random)
      expect(sample).toBeGreaterThanOrEqual(100)
      expect(sample).toBeLessThanOrEqual(300)
    }
  })
})
