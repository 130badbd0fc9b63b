import { spawn } from "node:child_process"
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

/**
 * The one lint finding `/metrics` draws on purpose: `gpu_serials_gpu_info` carries dcgm-exporter's own
 * label name `modelName`, which promtool's lint wants in snake_case (DCGM's output draws the same).
 */
export const dcgmLabelNameFinding = `${gpuInfoMetricName} label names should be written in 'snake_case' not 'camelCase'`

/** What promtool found besides `dcgmLabelNameFinding`: parse errors and every other lint rule. */
export const unexpectedProblems = (verdict: PromtoolVerdict): ReadonlyArray<string> =>
  verdict.problems.filter((problem) => problem !== dcgmLabelNameFinding)

/** promtool parsed the text (exit 0, or 3 for lint findings only) and found nothing but `dcgmLabelNameFinding`. */
export const acceptedByPromtool = (verdict: PromtoolVerdict): boolean =>
  (verdict.exitCode === 0 || verdict.exitCode === 3) && unexpectedProblems(verdict).length === 0
