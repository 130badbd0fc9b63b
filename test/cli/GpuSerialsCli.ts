import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { upToDateCompiledCli } from "../support/CompiledCli.ts"

export const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url))

export interface CliRun {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the compiled `gpu-serials` entry point (what ships) under the project's Node, with only the given environment. */
export const gpuSerials = (
  args: ReadonlyArray<string>,
  options: {
    readonly env?: Readonly<Record<string, string>>
    readonly input?: string | Buffer
    readonly timeoutMs?: number
  } = {},
): CliRun => {
  const result = spawnSync(process.execPath, [upToDateCompiledCli(), ...args], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH ?? "", ...options.env },
    encoding: "utf8",
    timeout: options.timeoutMs ?? 20_000,
    ...(options.input === undefined ? {} : { input: options.input }),
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

export const jsonLines = (text: string): ReadonlyArray<Record<string, unknown>> =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>)

export interface RunningCli {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves once stderr has a JSON log line with this `msg`. */
  readonly logged: (msg: string) => Promise<void>
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/** Starts the compiled `gpu-serials` entry point in the background, with only the given environment. */
export const startGpuSerials = (
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string>> = {},
): RunningCli => {
  const child = spawn(process.execPath, [upToDateCompiledCli(), ...args], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH ?? "", ...env },
  })
  let stdout = ""
  let stderr = ""
  const waiting: Array<{ readonly msg: string; readonly resolve: () => void }> = []
  const hasLogged = (msg: string) => stderr.includes(`"msg":${JSON.stringify(msg)}`)
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
    for (const wait of waiting.filter((entry) => hasLogged(entry.msg))) wait.resolve()
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }))
  })
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    logged: (msg) =>
      hasLogged(msg)
        ? Promise.resolve()
        : Promise.race([
            new Promise<void>((resolve) => waiting.push({ msg, resolve })),
            exited.then(() => {
              throw new Error(`gpu-serials exited before logging ${msg}:\n${stderr}`)
            }),
          ]),
    exited,
  }
}
