import type { SeededRandom } from "../catalog/SeededRandom.ts"

/** How long nvidia-smi takes to answer in a pod: fixed, uniform, or log-normal from its p50 and p99. */
export type ExecLatency =
  | { readonly kind: "fixed"; readonly ms: number }
  | { readonly kind: "uniform"; readonly minMs: number; readonly maxMs: number }
  | { readonly kind: "lognormal"; readonly p50Ms: number; readonly p99Ms: number }

/** z-score of the 99th percentile of the standard normal distribution. */
const z99 = 2.3263478740408408

export const sampleLatency = (latency: ExecLatency, random: SeededRandom): number => {
  switch (latency.kind) {
    case "fixed":
      return latency.ms
    case "uniform":
      return latency.minMs + random.next() * (latency.maxMs - latency.minMs)
    case "lognormal": {
      const mu = Math.log(Math.max(latency.p50Ms, 0.001))
      const sigma = Math.max(0, (Math.log(Math.max(latency.p99Ms, latency.p50Ms, 0.001)) - mu) / z99)
      return Math.exp(mu + sigma * random.normal())
    }
  }
}

const durationPattern = /^(\d+(?:\.\d+)?)(ms|s|m)?$/

/** Parses `250ms`, `1.5s`, `2m` (a bare number is milliseconds). */
export const parseDurationMs = (text: string): number => {
  const match = durationPattern.exec(text.trim())
  if (match === null) throw new RangeError(`invalid duration "${text}": use e.g. 200ms, 1.5s or 2m`)
  const value = Number(match[1])
  const unit = match[2] ?? "ms"
  return unit === "ms" ? value : unit === "s" ? value * 1000 : value * 60_000
}

/**
 * Parses a latency from the command line: `200ms` (fixed), `100ms-300ms` (uniform) or
 * `p50=200ms,p99=900ms` (log-normal).
 */
export const parseLatency = (text: string): ExecLatency => {
  const trimmed = text.trim()
  if (trimmed.includes("p50=")) {
    const parts = new Map(
      trimmed.split(",").map((part) => {
        const [key = "", value = ""] = part.split("=")
        return [key.trim(), value.trim()]
      }),
    )
    const p50 = parts.get("p50")
    const p99 = parts.get("p99")
    if (p50 === undefined || p99 === undefined) throw new RangeError(`invalid latency "${text}": give p50= and p99=`)
    return { kind: "lognormal", p50Ms: parseDurationMs(p50), p99Ms: parseDurationMs(p99) }
  }
  const range = /^([^-]+)-([^-]+)$/.exec(trimmed)
  if (range !== null)
    return { kind: "uniform", minMs: parseDurationMs(range[1] ?? ""), maxMs: parseDurationMs(range[2] ?? "") }
  return { kind: "fixed", ms: parseDurationMs(trimmed) }
}
