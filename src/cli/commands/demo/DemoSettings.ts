import * as Result from "effect/Result"
import { parseGoDuration } from "../../../config/GoDuration.ts"

/** The demo's own settings, from its options. */
export interface DemoSettings {
  readonly nodes: number
  readonly durationMs: number
  readonly faultRate: number
  /** Share of healthy GPUs per minute that turn degraded or failed. */
  readonly healthFaults: number
  readonly churn: number
  readonly seed: string
  readonly execLatencyMs?: number
  /** NVIDIA's DRA driver instead of the device plugin: ResourceSlices and kubelet-plugin pods. */
  readonly dra: boolean
  /** Simulated clusters under one hub; undefined: the single cluster of the plain demo. */
  readonly clusters: number | undefined
  /** Swaps each cluster starts per minute with another cluster of the fleet. */
  readonly crossClusterSwaps: number
}

/** The most clusters `--clusters` starts: each is a simulated API server, a nats-server and a service in one process. */
export const maxDemoClusters = 16

/** Swaps between clusters each cluster starts per minute unless --cross-cluster-swaps says otherwise. */
export const defaultCrossClusterSwaps = 3

/** The settings `options` give, and a problem for each option that is not valid. */
export const demoSettings = (options: ReadonlyMap<string, string>) => {
  const problems: Array<{ message: string }> = []
  const number = (name: string, fallback: number, valid: (value: number) => boolean, rule: string): number => {
    const text = options.get(name)
    if (text === undefined) return fallback
    const value = Number(text)
    if (text.trim() === "" || !valid(value)) problems.push({ message: `--${name} must be ${rule}, not ${text}` })
    return value
  }
  const duration = (name: string, fallbackMs: number): number | undefined => {
    const text = options.get(name)
    if (text === undefined) return fallbackMs
    const parsed = parseGoDuration(text)
    if (Result.isFailure(parsed) || parsed.success < 0) {
      problems.push({ message: `--${name} must be a duration such as 20s or 1m30s, not ${text}` })
      return undefined
    }
    return parsed.success
  }
  const durationMs = duration("duration", 20_000) ?? 0
  const execLatencyMs = options.has("exec-latency") ? duration("exec-latency", 0) : undefined
  const clusters = options.has("clusters")
    ? number(
        "clusters",
        2,
        (value) => Number.isInteger(value) && value >= 2 && value <= maxDemoClusters,
        `2 to ${maxDemoClusters}`,
      )
    : undefined
  const crossClusterSwaps = number(
    "cross-cluster-swaps",
    defaultCrossClusterSwaps,
    (value) => value >= 0 && value <= 600,
    "0 to 600 per minute",
  )
  if (clusters === undefined && options.has("cross-cluster-swaps")) {
    problems.push({ message: "--cross-cluster-swaps needs --clusters" })
  }
  const settings: DemoSettings = {
    nodes: number("nodes", 8, (value) => Number.isInteger(value) && value > 0 && value <= 10_000, "1 to 10000"),
    durationMs,
    faultRate: number("fault-rate", 0, (value) => value >= 0 && value <= 1, "a probability from 0 to 1"),
    healthFaults: number("fault-health", 0, (value) => value >= 0 && value <= 1, "a share from 0 to 1"),
    churn: number("churn", 0, (value) => value >= 0 && value <= 600, "0 to 600 per minute"),
    seed: options.get("seed") ?? "gpu-serials",
    dra: options.has("dra"),
    clusters,
    crossClusterSwaps,
    ...(execLatencyMs === undefined ? {} : { execLatencyMs }),
  }
  return { settings, problems }
}
