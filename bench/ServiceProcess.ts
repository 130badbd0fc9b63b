import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { upToDateCompiledCli } from "../test/support/CompiledCli.ts"

const repositoryRoot = fileURLToPath(new URL("../", import.meta.url))
const clockTicksPerSecond = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100

/** CPU time (user + system) a process has used so far, in milliseconds, from /proc. */
export const cpuMillis = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? []
  const ticks = Number(fields[11]) + Number(fields[12])
  return (ticks * 1000) / clockTicksPerSecond
}

/** The most resident memory a process has had, in megabytes (VmHWM). */
export const peakRssMegabytes = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("VmHWM:"))
  return Number(line?.replace(/\D+/g, "") ?? 0) / 1024
}

/** The compiled `gpu-serials run` (what ships) as a separate process; `onRecord` sees each record line as it arrives on stdout. */
export const startServiceProcess = (
  args: ReadonlyArray<string>,
  onRecord: (record: { readonly node: string; readonly event: string }) => void,
): ChildProcess => {
  const child = spawn(process.execPath, [upToDateCompiledCli(), "run", ...args], {
    cwd: repositoryRoot,
    // SERVICE_NODE_OPTIONS becomes the service's NODE_OPTIONS, so V8 heap settings can be compared.
    env: {
      PATH: process.env.PATH ?? "",
      LOG_LEVEL: "warn",
      ...(process.env.SERVICE_NODE_OPTIONS === undefined ? {} : { NODE_OPTIONS: process.env.SERVICE_NODE_OPTIONS }),
    },
    stdio: ["ignore", "pipe", "inherit"],
  })
  let pending = ""
  child.stdout?.on("data", (chunk: Buffer) => {
    pending += chunk.toString()
    const lines = pending.split("\n")
    pending = lines.pop() ?? ""
    for (const line of lines) if (line !== "") onRecord(JSON.parse(line) as { node: string; event: string })
  })
  return child
}

export const stopServiceProcess = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve) => {
    child.once("exit", (code) => resolve(code))
    child.kill("SIGTERM")
  })
