import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { largestCapture } from "./ParseBench.ts"
import { median, minMedian } from "./Sampling.ts"
import { cliEntry, repositoryRoot } from "./ServiceProcess.ts"

const coldStartGoalMs = 300
const commandDeadlineMs = 30_000

/** Wall time of one fresh `gpu-serials` process running `args` to its end, in milliseconds. */
const coldRun = (args: ReadonlyArray<string>): number => {
  const start = performance.now()
  const result = spawnSync(process.execPath, [cliEntry(), ...args], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["ignore", "ignore", "pipe"],
    timeout: commandDeadlineMs,
  })
  const elapsed = performance.now() - start
  if (result.status !== 0) {
    throw new Error(`gpu-serials ${args.join(" ")} exited with ${result.status}: ${result.stderr.toString().trim()}`)
  }
  return elapsed
}

/**
 * CLI cold start: `gpu-serials version` and `parse` of the largest real capture, each as fresh
 * processes of what package.json's `bin` names (so a build step is measured as shipped), run with this
 * Node; min / median of `runs`.
 */
export const cliBench = (runs: number): ReadonlyArray<string> => {
  const capture = largestCapture()
  const commands: ReadonlyArray<ReadonlyArray<string>> = [
    ["version"],
    ...(capture === undefined || !existsSync(capture) ? [] : [["parse", capture, "--format", "json"]]),
  ]
  const lines = [
    `CLI cold start (${cliEntry().slice(repositoryRoot.length)}, fresh process each, min / median of ${runs}, goal ≤ ${coldStartGoalMs} ms)`,
  ]
  for (const args of commands) {
    const times = Array.from({ length: runs }, () => coldRun(args))
    const shown = args.map((arg) => (arg === capture ? join("…", arg.split("/").at(-1) ?? arg) : arg)).join(" ")
    lines.push(
      `  gpu-serials ${shown}: ${minMedian(times, 0)} ms (${(median(times) / coldStartGoalMs).toFixed(2)}× of the goal)`,
    )
  }
  return lines
}
