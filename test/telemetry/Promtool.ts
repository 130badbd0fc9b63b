import { spawn } from "node:child_process"

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
