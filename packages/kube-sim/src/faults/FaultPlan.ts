import type { ApiRequestFacts } from "../api/ApiServer.ts"
import { ApiError, conflict } from "../api/ApiStatus.ts"
import type { SeededRandom } from "../catalog/SeededRandom.ts"

/** Probabilities of each failure, drawn independently for every request, exec or open watch. */
export interface FaultRates {
  /** Per API request (including exec upgrades): answered 500 or 503 instead. */
  readonly serverError: number
  /** Per API request: answered 429 Too Many Requests with Retry-After. */
  readonly throttle: number
  readonly retryAfterSeconds: number
  /** Per open watch, each second: the connection is reset. */
  readonly watchDropPerSecond: number
  /** Per exec: the command never answers; only the client's deadline ends it. */
  readonly execHang: number
  /** Per exec: nvidia-smi exits non-zero. */
  readonly execNonZeroExit: number
  /** Per exec: stdout is cut short while the exit status still says success. */
  readonly execTruncated: number
  /** Per exec: stdout is noise instead of the report. */
  readonly execGarbage: number
  /** Drivers that fail per minute across the cluster, each on a healthy host drawn at random. */
  readonly driverFailuresPerMinute: number
  /** How long a driver failed this way stays broken before it is repaired. */
  readonly driverFailureSeconds: number
  /** Share of healthy GPUs per minute on which a health fault starts (degraded or failed, then reset). */
  readonly healthFaultsPerGpuMinute: number
  /** The least time each step of a health fault lasts (it lasts up to half as long again). */
  readonly healthStageSeconds: number
  /**
   * Per ResourceSlice write (DRA clusters): the slice misses one of its node's GPUs, or keeps one that
   * left, as a lagging plugin's would, until the node's next republish.
   */
  readonly draMismatch: number
}

export const noFaults: FaultRates = {
  serverError: 0,
  throttle: 0,
  retryAfterSeconds: 1,
  watchDropPerSecond: 0,
  execHang: 0,
  execNonZeroExit: 0,
  execTruncated: 0,
  execGarbage: 0,
  driverFailuresPerMinute: 0,
  driverFailureSeconds: 20,
  healthFaultsPerGpuMinute: 0,
  healthStageSeconds: 20,
  draMismatch: 0,
}

/** Which API requests a scripted fault applies to; every given field must match. */
export interface RequestMatch {
  /** The client that sent the request (`cluster.addClient(name)`; `default` for the cluster's own kubeconfig). */
  readonly client?: string
  readonly verb?: string
  readonly resource?: string
  readonly subresource?: string
  readonly namespace?: string
  readonly name?: string
}

/** A one-shot (or `times`-shot) fault, consumed by the next matching request or exec. */
export type ScriptedFault =
  | {
      readonly kind: "server-error"
      readonly status?: 500 | 503
      readonly match?: RequestMatch
      readonly times?: number
    }
  | {
      readonly kind: "throttle"
      readonly retryAfterSeconds?: number
      readonly match?: RequestMatch
      readonly times?: number
    }
  /** The request is held unanswered until its client gives up (its deadline) or the cluster closes. */
  | { readonly kind: "hang"; readonly match?: RequestMatch; readonly times?: number }
  /** The request is answered 409 Conflict, as a write whose resourceVersion lost a race. */
  | { readonly kind: "conflict"; readonly match?: RequestMatch; readonly times?: number }
  | { readonly kind: "exec-hang"; readonly node?: string; readonly times?: number }
  | { readonly kind: "exec-exit"; readonly exitCode: number; readonly node?: string; readonly times?: number }
  | { readonly kind: "exec-truncate"; readonly node?: string; readonly times?: number }
  | { readonly kind: "exec-garbage"; readonly node?: string; readonly times?: number }

/** What happens to one exec instead of a normal run. */
export type ExecFault =
  | { readonly kind: "hang" }
  | { readonly kind: "exit"; readonly exitCode: number }
  | { readonly kind: "truncate" }
  | { readonly kind: "garbage" }

interface Armed {
  readonly fault: ScriptedFault
  remaining: number
}

/** Failures of a non-zero exit, weighted towards what breaks in production: driver gone, NVML mismatch. */
const nonZeroExitCodes = [9, 9, 18, 6, 15, 255]

/**
 * Fault injection for the simulated cluster: probabilistic failures at configured rates, plus scripted
 * faults armed by a test or the demo and consumed by the next matching request or exec.
 */
export class FaultPlan {
  private rates: FaultRates
  private readonly random: SeededRandom
  private armed: Armed[] = []

  constructor(rates: Partial<FaultRates>, random: SeededRandom) {
    this.rates = { ...noFaults, ...rates }
    this.random = random
  }

  get currentRates(): FaultRates {
    return this.rates
  }

  setRates(rates: Partial<FaultRates>): void {
    this.rates = { ...this.rates, ...rates }
  }

  inject(fault: ScriptedFault): void {
    this.armed.push({ fault, remaining: Math.max(1, fault.times ?? 1) })
  }

  /** Disarms scripted faults and sets every rate to zero. */
  clear(): void {
    this.armed = []
    this.rates = { ...noFaults }
  }

  /** Decides whether an API request fails, or hangs, before it is served. */
  readonly gate = (facts: ApiRequestFacts): ApiError | "hang" | undefined => {
    const scripted = this.take(
      (fault) =>
        (fault.kind === "server-error" ||
          fault.kind === "throttle" ||
          fault.kind === "hang" ||
          fault.kind === "conflict") &&
        matches(fault.match, facts),
    )
    if (scripted?.kind === "server-error") return serverError(scripted.status ?? 500)
    if (scripted?.kind === "throttle") return throttled(scripted.retryAfterSeconds ?? this.rates.retryAfterSeconds)
    if (scripted?.kind === "hang") return "hang"
    if (scripted?.kind === "conflict") return conflict(facts.resource, facts.group, facts.name)
    if (facts.verb === "watch" && facts.subresource === "") {
      if (this.random.chance(this.rates.serverError)) return serverError(503)
      return undefined
    }
    if (this.random.chance(this.rates.throttle)) return throttled(this.rates.retryAfterSeconds)
    if (this.random.chance(this.rates.serverError)) return serverError(this.random.chance(0.5) ? 500 : 503)
    return undefined
  }

  /** Decides what goes wrong with one exec on a node, if anything. */
  execFault(nodeName: string): ExecFault | undefined {
    const scripted = this.take(
      (fault) =>
        (fault.kind === "exec-hang" ||
          fault.kind === "exec-exit" ||
          fault.kind === "exec-truncate" ||
          fault.kind === "exec-garbage") &&
        (fault.node === undefined || fault.node === nodeName),
    )
    switch (scripted?.kind) {
      case "exec-hang":
        return { kind: "hang" }
      case "exec-exit":
        return { kind: "exit", exitCode: scripted.exitCode }
      case "exec-truncate":
        return { kind: "truncate" }
      case "exec-garbage":
        return { kind: "garbage" }
      default:
        break
    }
    const rates = this.rates
    if (this.random.chance(rates.execHang)) return { kind: "hang" }
    if (this.random.chance(rates.execNonZeroExit)) return { kind: "exit", exitCode: this.random.pick(nonZeroExitCodes) }
    if (this.random.chance(rates.execTruncated)) return { kind: "truncate" }
    if (this.random.chance(rates.execGarbage)) return { kind: "garbage" }
    return undefined
  }

  private take(predicate: (fault: ScriptedFault) => boolean): ScriptedFault | undefined {
    const index = this.armed.findIndex((armed) => predicate(armed.fault))
    const armed = this.armed[index]
    if (armed === undefined) return undefined
    armed.remaining--
    if (armed.remaining <= 0) this.armed.splice(index, 1)
    return armed.fault
  }
}

const matches = (match: RequestMatch | undefined, facts: ApiRequestFacts): boolean =>
  match === undefined ||
  ((match.client === undefined || match.client === facts.client) &&
    (match.verb === undefined || match.verb === facts.verb) &&
    (match.resource === undefined || match.resource === facts.resource) &&
    (match.subresource === undefined || match.subresource === facts.subresource) &&
    (match.namespace === undefined || match.namespace === facts.namespace) &&
    (match.name === undefined || match.name === facts.name))

const serverError = (status: 500 | 503): ApiError =>
  status === 500
    ? new ApiError(500, "InternalError", "Internal error occurred: etcdserver: request timed out", {
        causes: [{ message: "etcdserver: request timed out" }],
      })
    : new ApiError(503, "ServiceUnavailable", "the server is currently unable to handle the request", {
        retryAfterSeconds: 1,
      })

const throttled = (retryAfterSeconds: number): ApiError =>
  new ApiError(429, "TooManyRequests", "Too many requests, please try again later.", { retryAfterSeconds })
