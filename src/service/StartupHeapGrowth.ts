import { setFlagsFromString } from "node:v8"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { ReadinessChecks } from "../health/ReadinessChecks.ts"

/** V8's heap growing factor, `--heap-growing-percent`: the old generation may grow this much past the live heap; 0 lets V8 choose. */
export interface HeapGrowth {
  readonly set: (percent: number) => void
}

/** The running V8's, changed while it runs (V8 reads the option at each full collection). */
export const v8HeapGrowth: HeapGrowth = {
  set: (percent) => setFlagsFromString(`--heap-growing-percent=${percent}`),
}

/** The `--heap-growing-percent=N` (N > 0) the process was started with, the last one given; undefined when none. */
export const startedHeapGrowingPercent = (execArgv: ReadonlyArray<string>): number | undefined => {
  let percent: number | undefined
  for (const arg of execArgv) {
    const given = /^--heap[-_]growing[-_]percent=(\d+)$/.exec(arg)?.[1]
    if (given !== undefined) percent = Number(given) > 0 ? Number(given) : undefined
  }
  return percent
}

export interface StartupHeapGrowthOptions {
  /** The process's `--heap-growing-percent`, when it was started with one. */
  readonly startedWith: number | undefined
  /** How often readiness is asked for while the service starts. */
  readonly pollInterval: Duration.Input
  /** Longest the growth stays V8's own when the service does not become ready (a follower, a cluster out of reach). */
  readonly atMost: Duration.Input
}

export const defaultStartupHeapGrowthOptions: Omit<StartupHeapGrowthOptions, "startedWith"> = {
  pollInterval: Duration.millis(50),
  atMost: Duration.minutes(2),
}

/**
 * While the service starts, V8 sizes the old generation by itself; once `/readyz` first passes (or after
 * `atMost`, or when the scope closes) the `--heap-growing-percent` the process was started with is back.
 *
 * The image starts Node with `--heap-growing-percent=15`, so the old generation is collected once it is
 * 15% past the live heap: that keeps the RSS of a syncing fleet down. A service that starts has a live heap
 * of 25-40 MB, and V8 starts marking as soon as the room left before its limit is less than the young
 * generation: with 15% of so small a heap that is always, so while the first lists
 * of a large cluster arrive the old generation was marked and compacted about every 100 ms, on the core
 * the lists need (at 10,000 nodes a third of the CPU before `/readyz`). Nothing changes without the option.
 */
export const relaxedUntilReady = (
  growth: HeapGrowth,
  options: StartupHeapGrowthOptions,
): Effect.Effect<void, never, Scope.Scope | ReadinessChecks> =>
  Effect.gen(function* () {
    const startedWith = options.startedWith
    if (startedWith === undefined) return
    const checks = yield* ReadinessChecks
    const pollInterval = Duration.fromInputUnsafe(options.pollInterval)
    growth.set(0)
    const restore = Effect.sync(() => growth.set(startedWith))
    yield* Effect.addFinalizer(() => restore)
    const firstReady = Effect.gen(function* () {
      while (!(yield* checks.readiness).ready) yield* Effect.sleep(pollInterval)
    })
    yield* firstReady.pipe(Effect.timeoutOption(options.atMost), Effect.andThen(restore), Effect.forkScoped)
  })
