import { spawn } from "node:child_process"
import { loadavg } from "node:os"
import { join } from "node:path"
import { startControlledSimulator } from "./ControlledSimulator.ts"
import { measuredCore, pinToCore, simulatorCore } from "./CorePinning.ts"
import { minMedian } from "./Sampling.ts"
import { repositoryRoot, serviceNodeFlags } from "./ServiceProcess.ts"

/** What `FirstListMain.ts` lists: the simulator's kubeconfig and the device-plugin pods' selection. */
export interface FirstListRun {
  readonly kubeconfigPath: string
  /** The simulator's process, whose CPU the lister takes from /proc while it lists. */
  readonly simulatorPid: number
  readonly namespace: string
  readonly labelSelector: string
}

/** One list's bytes and the time of its JSON.parse and of the receiver's decode of the parsed items. */
export interface ListDecode {
  readonly megabytes: number
  readonly parseMs: number
  readonly decodeMs: number
}

/** What `FirstListMain.ts` measured. */
export interface FirstListDone {
  /** From the informers' start to both synced. */
  readonly syncedMs: number
  /** From the informers' start to the first change handed over. */
  readonly firstChangeMs: number
  /** CPU (user + system, every thread) of the lister from the start to both synced. */
  readonly cpuMs: number
  /** Garbage collection pauses until both synced. */
  readonly gcMs: number
  /** CPU of the simulator's process from the start to both synced. */
  readonly simulatorCpuMs: number
  readonly objects: number
  readonly pods: ListDecode
  readonly nodes: ListDecode
}

interface FirstListFigures extends FirstListDone {
  readonly loadAverage: number
  readonly pinned: boolean
}

const listDeadlineMs = 600_000
/** The device-plugin pods the simulator runs, as the service selects them by default. */
const devicePluginSelector = "app=nvidia-device-plugin-daemonset"
const benchModelMix = { "h100-hgx": 30, "gb200-nvl72": 10, "a100-mig": 15, t4: 20, l40s: 15, rtx4090: 5 }

/** Runs `FirstListMain.ts` on the measured core with the service's V8 flags; its figures and the simulator's CPU meanwhile. */
const listOnce = (run: FirstListRun): Promise<FirstListFigures> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...serviceNodeFlags(), join(repositoryRoot, "bench/FirstListMain.ts")], {
      cwd: repositoryRoot,
      stdio: ["pipe", "pipe", "inherit"],
    })
    const pinned = pinToCore(child.pid, measuredCore)
    child.stdin.end(JSON.stringify(run))
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    const deadline = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error("the first list did not finish in time"))
    }, listDeadlineMs)
    child.once("exit", (code) => {
      clearTimeout(deadline)
      if (code !== 0) return reject(new Error(`the first list exited with ${code}`))
      const done = JSON.parse(output) as FirstListDone
      resolve({
        ...done,
        loadAverage: loadavg()[0] ?? 0,
        pinned,
      })
    })
  })

/**
 * The receiver's first list of a cluster of `nodes` nodes, each with its device-plugin pod: the simulated
 * API server in its own process on core 0, the lister (the receiver's two informers through the real
 * API client, the service's V8 flags) in another on core 1, `runs` times. Prints the time to both synced
 * and to the first change handed over, the lister's CPU and GC pauses, the simulator's CPU meanwhile,
 * and each list's bytes, JSON.parse and decode times (the least of 5 passes over the fetched pages).
 */
export const firstListBench = async (nodes: number, runs: number): Promise<ReadonlyArray<string>> => {
  const simulator = await startControlledSimulator({
    options: {
      nodes,
      modelMix: benchModelMix,
      seed: `bench-${nodes}`,
      execLatency: 200,
      podTimings: { startMs: 0, readyMs: 0, terminationMs: 0 },
    },
    heldBack: 0,
  })
  const figures: Array<FirstListFigures> = []
  try {
    const run = {
      kubeconfigPath: simulator.started.kubeconfigPath,
      namespace: simulator.started.namespace,
      labelSelector: devicePluginSelector,
      simulatorPid: simulator.child.pid ?? 0,
    }
    for (let index = 0; index < runs; index++) figures.push(await listOnce(run))
  } finally {
    await simulator.close()
  }
  const all = (value: (figure: FirstListFigures) => number): ReadonlyArray<number> => figures.map(value)
  const seconds = (value: (figure: FirstListFigures) => number): string =>
    minMedian(
      all(value).map((ms) => ms / 1000),
      2,
    )
  const pinning =
    simulator.pinned && figures.every((figure) => figure.pinned)
      ? `simulator on core ${simulatorCore}, lister on core ${measuredCore}`
      : "NOT pinned"
  const list = (name: string, of: (figure: FirstListFigures) => ListDecode): string =>
    `  ${name}: ${minMedian(
      all((figure) => of(figure).megabytes),
      1,
    )} MB; JSON.parse ${minMedian(
      all((figure) => of(figure).parseMs),
      0,
    )} ms, ` +
    `decode of the parsed items ${minMedian(
      all((figure) => of(figure).decodeMs),
      0,
    )} ms`
  return [
    `first list: ${nodes} nodes and ${nodes} device-plugin pods, pages of 500, HTTPS` +
      (runs > 1 ? ` (min / median of ${runs} runs)` : "") +
      `; ${pinning}; node ${serviceNodeFlags().join(" ") || "(no flags)"}; load average ${minMedian(
        all((figure) => figure.loadAverage),
        1,
      )}`,
    `  both informers synced after ${seconds((figure) => figure.syncedMs)} s, first change handed over after ${seconds((figure) => figure.firstChangeMs)} s`,
    `  lister CPU ${seconds((figure) => figure.cpuMs)} s (GC pauses ${seconds((figure) => figure.gcMs)} s); simulator CPU meanwhile ${seconds((figure) => figure.simulatorCpuMs)} s`,
    list("pods", (figure) => figure.pods),
    list("nodes", (figure) => figure.nodes),
  ]
}
