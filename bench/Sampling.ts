/** Timing samples of one operation, summarised the way docs/benchmarks.md reports them. */
export interface Summary {
  readonly runs: number
  readonly medianMs: number
  readonly p90Ms: number
  readonly p99Ms: number
  readonly minMs: number
}

export const summarise = (samplesMs: ReadonlyArray<number>): Summary => {
  const sorted = [...samplesMs].sort((a, b) => a - b)
  const at = (quantile: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))] ?? 0
  return { runs: sorted.length, medianMs: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), minMs: sorted[0] ?? 0 }
}

/** Runs `operation` for `warmupRuns`, then samples it until `runs` samples or `maxMs` have passed. */
export const sample = (
  operation: () => void,
  options: { readonly warmupRuns: number; readonly runs: number; readonly maxMs: number },
): Summary => {
  for (let run = 0; run < options.warmupRuns; run++) operation()
  const samples: Array<number> = []
  const deadline = performance.now() + options.maxMs
  while (samples.length < options.runs && performance.now() < deadline) {
    const start = performance.now()
    operation()
    samples.push(performance.now() - start)
  }
  return summarise(samples)
}

/** A figure against its budget: `ratio` < 1 means within budget for "at most" bounds. */
export const againstBudget = (value: number, budget: number): string => `${(value / budget).toFixed(2)}× of budget`

/** Figures of repeated runs as `min / median` (one figure alone when there was one run); `digits` after the point. */
export const minMedian = (values: ReadonlyArray<number>, digits: number): string => {
  const middle = median(values).toFixed(digits)
  return values.length <= 1 ? middle : `${Math.min(...values).toFixed(digits)} / ${middle}`
}

/** The median of repeated runs' figures, the one a ratio to the goal is taken of. */
export const median = (values: ReadonlyArray<number>): number =>
  [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? 0
