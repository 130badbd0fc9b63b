import { spawn } from "node:child_process"
import { gpuHealthMetricNames } from "../../src/metrics/GpuHealthMetric.ts"
import { gpuInfoMetricName } from "../../src/metrics/GpuInfoMetric.ts"

export interface PromtoolVerdict {
  readonly exitCode: number | null
  /** Every line promtool printed: lint problems and parse errors. */
  readonly problems: ReadonlyArray<string>
}

/** Runs `promtool check metrics` on a Prometheus text exposition. */
export const checkMetrics = (exposition: string): Promise<PromtoolVerdict> =>
  new Promise((resolve, reject) => {
    const promtool = spawn("/usr/bin/promtool", ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] })
    let printed = ""
    promtool.stdout.on("data", (chunk: Buffer) => {
      printed += chunk.toString("utf8")
    })
    promtool.stderr.on("data", (chunk: Buffer) => {
      printed += chunk.toString("utf8")
    })
    promtool.on("error", reject)
    promtool.on("close", (exitCode) =>
      resolve({ exitCode, problems: printed.split("\n").filter((line) => line.trim() !== "") }),
    )
    promtool.stdin.end(exposition)
  })

/** The lint finding a series with dcgm-exporter's own label name `modelName` draws (DCGM's output draws the same). */
const camelCaseFinding = (metric: string): string =>
  `${metric} label names should be written in 'snake_case' not 'camelCase'`

/**
 * The lint findings `/metrics` draws on purpose: `gpu_serials_gpu_info`, and the per-GPU health series that
 * carry its labels, have `modelName`, which promtool's lint wants in snake_case.
 */
export const dcgmLabelNameFindings: ReadonlySet<string> = new Set(
  [gpuInfoMetricName, gpuHealthMetricNames.health, gpuHealthMetricNames.rmaEligible].map(camelCaseFinding),
)

/** What promtool found besides `dcgmLabelNameFindings`: parse errors and every other lint rule. */
export const unexpectedProblems = (verdict: PromtoolVerdict): ReadonlyArray<string> =>
  verdict.problems.filter((problem) => !dcgmLabelNameFindings.has(problem))

/** promtool parsed the text (exit 0, or 3 for lint findings only) and found nothing but `dcgmLabelNameFindings`. */
export const acceptedByPromtool = (verdict: PromtoolVerdict): boolean =>
  (verdict.exitCode === 0 || verdict.exitCode === 3) && unexpectedProblems(verdict).length === 0
