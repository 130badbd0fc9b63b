import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { createInterface } from "node:readline"
import type { SimulatedClusterOptions } from "@gpu-serials/kube-sim"
import { pinToCore, simulatorCore } from "./CorePinning.ts"
import { repositoryRoot } from "./ServiceProcess.ts"

/** The cluster to start, and how many of its device-plugin pods (the first nodes by name) start not Ready. */
export interface SimulatorSetup {
  readonly options: SimulatedClusterOptions
  readonly heldBack: number
}

/** A device-plugin pod, with the driver version of its node. */
export interface SimulatedPod {
  readonly node: string
  readonly pod: string
  readonly driverVersion: string
}

/** What the simulator process says once it serves. */
export interface SimulatorStarted {
  readonly url: string
  readonly kubeconfigPath: string
  readonly namespace: string
  readonly container: string
  readonly heldBack: ReadonlyArray<string>
  readonly pods: ReadonlyArray<SimulatedPod>
}

/** What the bench asks of the simulator process, one line each. */
export type SimulatorCommand =
  | { readonly op: "stats" }
  | { readonly op: "ready"; readonly nodes: ReadonlyArray<string>; readonly perSecond: number }

/** The API server's counters: requests (exec upgrades included), execs run, and TLS handshakes where it counts them. */
export interface SimulatorCounters {
  readonly requests: number
  readonly execs: number
  readonly tlsHandshakes?: number
  readonly tlsResumed?: number
}

export interface ControlledSimulator {
  readonly child: ChildProcess
  readonly started: SimulatorStarted
  /** Whether the process runs on a core of its own. */
  readonly pinned: boolean
  readonly counters: () => Promise<SimulatorCounters>
  /** Makes the pods of `nodes` Ready one after another, `perSecond` of them a second; when each turned Ready (epoch ms). */
  readonly makeReady: (nodes: ReadonlyArray<string>, perSecond: number) => Promise<Readonly<Record<string, number>>>
  readonly close: () => Promise<void>
}

const answerDeadlineMs = 30_000
const startDeadlineMs = 600_000

/**
 * The simulated cluster in a process of its own (`ControlledSimulatorMain.ts`), pinned to the simulator's
 * core, so the API server's work is not counted in, nor competes with, the process measured.
 */
export const startControlledSimulator = async (setup: SimulatorSetup): Promise<ControlledSimulator> => {
  const child = spawn(
    process.execPath,
    [join(repositoryRoot, "bench/ControlledSimulatorMain.ts"), JSON.stringify(setup)],
    { cwd: repositoryRoot, stdio: ["pipe", "pipe", "inherit"] },
  )
  const pinned = pinToCore(child.pid, simulatorCore)
  const waiting: Array<(line: string) => void> = []
  const early: Array<string> = []
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    const next = waiting.shift()
    if (next === undefined) early.push(line)
    else next(line)
  })
  const nextLine = (what: string, deadlineMs: number): Promise<string> =>
    new Promise((resolve, reject) => {
      const queued = early.shift()
      if (queued !== undefined) return resolve(queued)
      const onExit = (code: number | null) => reject(new Error(`the simulator exited (${code}) before ${what}`))
      const timer = setTimeout(() => reject(new Error(`the simulator did not answer ${what} in time`)), deadlineMs)
      child.once("exit", onExit)
      waiting.push((line) => {
        clearTimeout(timer)
        child.off("exit", onExit)
        resolve(line)
      })
    })
  const ask = async <A>(command: SimulatorCommand, deadlineMs: number): Promise<A> => {
    child.stdin?.write(`${JSON.stringify(command)}\n`)
    return JSON.parse(await nextLine(command.op, deadlineMs)) as A
  }
  const started = JSON.parse(await nextLine("its start", startDeadlineMs)) as SimulatorStarted
  return {
    child,
    started,
    pinned,
    counters: () => ask<SimulatorCounters>({ op: "stats" }, answerDeadlineMs),
    makeReady: (nodes, perSecond) =>
      ask({ op: "ready", nodes, perSecond }, answerDeadlineMs + (nodes.length * 1000) / perSecond),
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.kill("SIGTERM")
      }),
  }
}
