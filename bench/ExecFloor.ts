import { spawn } from "node:child_process"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { execPath } from "../src/kubeclient/remotecommand/ExecSession.ts"
import { formatForDriverBranch, queryArgvFor, queryFormatFor } from "../src/nvsmi/Command.ts"
import { execArgvFor, plainNvidiaSmi } from "../src/nvsmi/ExecArgv.ts"
import { refusedFieldsForDriverBranch } from "../src/nvsmi/QueryFields.ts"
import type { SimulatorStarted } from "./ControlledSimulator.ts"
import { measuredCore, pinToCore } from "./CorePinning.ts"
import { cpuMillis, repositoryRoot } from "./ServiceProcess.ts"

/** What the floor client runs: the exec paths, in order, at most `workers` at once and `qps` a second. */
export interface ExecFloorRun {
  readonly kubeconfigPath: string
  readonly paths: ReadonlyArray<string>
  readonly qps: number
  readonly workers: number
  readonly execTimeoutMs: number
}

/** What the floor client did. */
export interface ExecFloorDone {
  readonly execs: number
  readonly failures: number
  /** Frame bytes received, channel bytes included. */
  readonly bytes: number
  readonly seconds: number
  /** The exec protocol the API server chose. */
  readonly protocol: string
  /** Whether the API server was HTTPS. */
  readonly secure: boolean
}

export interface ExecFloorFigures extends ExecFloorDone {
  readonly cpuPerExecMs: number
  readonly pinned: boolean
}

const execTimeoutMs = 30_000
const floorDeadlineMs = 900_000

/**
 * The exec each pod's first reading runs in the service's default mode (`auto`): the nvidia-smi query its
 * node's driver branch (GPU Feature Discovery's label) calls for, so the floor moves the same output.
 */
export const floorExecPaths = (cluster: SimulatorStarted, nodes: ReadonlySet<string>): ReadonlyArray<string> =>
  cluster.pods
    .filter((pod) => nodes.has(pod.node))
    .map((pod) => {
      const branch = Number(pod.driverVersion.split(".")[0])
      const argv = queryArgvFor(
        queryFormatFor("auto", formatForDriverBranch(branch)),
        refusedFieldsForDriverBranch(branch),
      )
      return execPath({
        namespace: cluster.namespace,
        pod: pod.pod,
        container: cluster.container,
        argv: execArgvFor(plainNvidiaSmi, argv),
      })
    })

/**
 * Runs the floor client (`ExecFloorMain.ts`) as its own process on the measured core and takes its CPU
 * from /proc (user + system, every thread) from just before its first exec to just after its last.
 */
export const measureExecFloor = (run: Omit<ExecFloorRun, "execTimeoutMs">): Promise<ExecFloorFigures> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repositoryRoot, "bench/ExecFloorMain.ts")], {
      cwd: repositoryRoot,
      stdio: ["pipe", "pipe", "inherit"],
    })
    child.stdin.write(`${JSON.stringify({ ...run, execTimeoutMs })}\n`)
    const pid = child.pid ?? 0
    const pinned = pinToCore(pid, measuredCore)
    const deadline = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error("the exec floor did not finish in time"))
    }, floorDeadlineMs)
    child.once("exit", (code) => {
      clearTimeout(deadline)
      reject(new Error(`the exec floor exited (${code}) before it finished`))
    })
    let cpuAtStart = 0
    createInterface({ input: child.stdout }).on("line", (line) => {
      const said = JSON.parse(line) as { readonly ready: true } | ExecFloorDone
      if ("ready" in said) {
        cpuAtStart = cpuMillis(pid)
        child.stdin.write("go\n")
        return
      }
      const cpu = cpuMillis(pid) - cpuAtStart
      clearTimeout(deadline)
      child.stdin.end("stop\n")
      resolve({ ...said, cpuPerExecMs: cpu / said.execs, pinned })
    })
  })
