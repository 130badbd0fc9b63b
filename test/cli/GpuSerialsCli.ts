import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

export const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url))

export interface CliRun {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the real `gpu-serials` entry point under the project's Node, with only the given environment. */
export const gpuSerials = (
  args: ReadonlyArray<string>,
  options: { readonly env?: Readonly<Record<string, string>>; readonly input?: string | Buffer } = {},
): CliRun => {
  const result = spawnSync(process.execPath, ["bin/gpu-serials.ts", ...args], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH ?? "", ...options.env },
    encoding: "utf8",
    timeout: 20_000,
    ...(options.input === undefined ? {} : { input: options.input }),
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

export const jsonLines = (text: string): ReadonlyArray<Record<string, unknown>> =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
