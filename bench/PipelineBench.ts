import { startSimulatedCluster } from "@gpu-serials/kube-sim"
import { freePort } from "../src/health/FreePort.ts"
import { median, minMedian, summarise } from "./Sampling.ts"
import {
  cpuMillis,
  liveHeapMegabytes,
  peakRssMegabytes,
  serviceNodeFlags,
  startServiceProcess,
  stopServiceProcess,
  timeToReady,
} from "./ServiceProcess.ts"

export interface PipelineScenario {
  readonly nodes: number
  readonly qps: number
  readonly workers: number
  readonly execLatencyMs: number
}

export const pipelineScenarios: ReadonlyArray<PipelineScenario> = [
  { nodes: 2_000, qps: 50, workers: 16, execLatencyMs: 200 },
  { nodes: 2_000, qps: 1_000, workers: 64, execLatencyMs: 200 },
  { nodes: 10_000, qps: 50, workers: 16, execLatencyMs: 200 },
  { nodes: 10_000, qps: 1_000, workers: 64, execLatencyMs: 200 },
]

/** The fleet-scale case, run only when asked for (`npm run bench -- pipeline50k`): its sync takes minutes. */
export const fleetScaleScenario: PipelineScenario = { nodes: 50_000, qps: 1_000, workers: 64, execLatencyMs: 200 }

/** Goals of the product owner: peak RSS by fleet size, CPU per reading by QPS, time to `/readyz`. */
const peakRssGoalMegabytes = (nodes: number): number => (nodes <= 2_000 ? 200 : nodes <= 10_000 ? 250 : 600)
const cpuGoalMs = (qps: number): number => (qps <= 50 ? 2.5 : 1.5)
const readyGoalMs = 2_000
const boundGoal = 0.9

/** Healthy models only, in the default proportions: every node gives records. */
const benchModelMix = { "h100-hgx": 30, "gb200-nvl72": 10, "a100-mig": 15, t4: 20, l40s: 15, rtx4090: 5 }
const latencyProbes = 60
const probesPerSecond = 5
/** Deadline of the initial sync: 10 minutes, or 50 ms per node for larger fleets on a loaded machine. */
const syncTimeoutMs = (nodes: number): number => Math.max(600_000, nodes * 50)

const ratio = (value: number, goal: number): string => `${(value / goal).toFixed(2)}×`

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const waitUntil = async (condition: () => boolean, timeoutMs: number, what: string): Promise<void> => {
  const deadline = performance.now() + timeoutMs
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

/** What one run of a scenario measured. */
interface PipelineFigures {
  readonly readingsPerSecond: number
  readonly execsPerSecond: number
  readonly bound: number
  readonly cpuPerReadingMs: number
  readonly peakRssMegabytes: number
  readonly liveHeapMegabytes: number
  readonly readyMs: number
  readonly latencyP50Ms: number
  readonly latencyP99Ms: number
  readonly probes: number
}

/**
 * One run of a pipeline scenario: the simulated cluster in this process, `gpu-serials run` in another.
 * Measures the time from the spawn to `/readyz` 200, the initial sync's readings per second against
 * min(QPS, workers / exec latency), the service's CPU per reading, its peak RSS and its live heap after
 * a full GC at the end of the sync, then the latency from pod Ready to records, on probe pods made ready
 * one by one once the service is idle (so not rate-limited).
 */
const measurePipeline = async (scenario: PipelineScenario): Promise<PipelineFigures> => {
  const cluster = await startSimulatedCluster({
    nodes: scenario.nodes,
    modelMix: benchModelMix,
    seed: `bench-${scenario.nodes}`,
    execLatency: scenario.execLatencyMs,
    podTimings: { startMs: 0, readyMs: 0, terminationMs: 0 },
  })
  const probes = cluster.nodeNames().slice(0, latencyProbes)
  for (const node of probes) cluster.setPodReady(node, false)
  const firstRecord = new Map<string, number>()
  const port = await freePort()
  const service = startServiceProcess(
    [
      "--cluster-name",
      "bench",
      "--kubeconfig",
      cluster.kubeconfigPath,
      "--qps",
      String(scenario.qps),
      "--burst",
      String(scenario.qps),
      "--workers",
      String(scenario.workers),
      "--server-port",
      String(port),
      "--no-labels",
    ],
    (record) => {
      if (!firstRecord.has(record.node)) firstRecord.set(record.node, performance.now())
    },
  )
  const pid = service.child.pid ?? 0
  try {
    const ready = timeToReady(service, port, syncTimeoutMs(scenario.nodes))
    ready.catch(() => undefined)
    const synced = scenario.nodes - probes.length
    await waitUntil(() => firstRecord.size >= 1, syncTimeoutMs(scenario.nodes), "the first record")
    const cpuAtFirst = cpuMillis(pid)
    const execsAtFirst = cluster.stats().execs
    const startedAt = Math.min(...firstRecord.values())
    await waitUntil(() => firstRecord.size >= synced, syncTimeoutMs(scenario.nodes), "the initial sync")
    const finishedAt = Math.max(...firstRecord.values())
    const cpuSpent = cpuMillis(pid) - cpuAtFirst
    const seconds = (finishedAt - startedAt) / 1000
    const readingsPerSecond = (synced - 1) / seconds
    // A node on a driver older than 570 answers the CSV query with an error first: its first reading takes two execs.
    const execsPerSecond = (cluster.stats().execs - execsAtFirst) / seconds
    const bound = Math.min(scenario.qps, scenario.workers / (scenario.execLatencyMs / 1000))
    const liveHeap = await liveHeapMegabytes(service)
    const readyMs = await ready

    await sleep(1_000)
    const readyAt = new Map<string, number>()
    for (const node of probes) {
      readyAt.set(node, performance.now())
      cluster.setPodReady(node, true)
      await sleep(1000 / probesPerSecond)
    }
    await waitUntil(() => probes.every((node) => firstRecord.has(node)), 60_000, "the probe pods' records")
    const latency = summarise(probes.map((node) => (firstRecord.get(node) ?? 0) - (readyAt.get(node) ?? 0)))
    return {
      readingsPerSecond,
      execsPerSecond,
      bound,
      cpuPerReadingMs: cpuSpent / (synced - 1),
      peakRssMegabytes: peakRssMegabytes(pid),
      liveHeapMegabytes: liveHeap,
      readyMs,
      latencyP50Ms: latency.medianMs,
      latencyP99Ms: latency.p99Ms,
      probes: latency.runs,
    }
  } finally {
    await stopServiceProcess(service)
    await cluster.close()
  }
}

/** A scenario run `runs` times, each figure as min / median of the runs, with its goal and ratio. */
export const pipelineBench = async (scenario: PipelineScenario, runs = 1): Promise<ReadonlyArray<string>> => {
  const figures: Array<PipelineFigures> = []
  for (let run = 0; run < runs; run++) figures.push(await measurePipeline(scenario))
  const all = <K extends keyof PipelineFigures>(key: K): ReadonlyArray<number> => figures.map((figure) => figure[key])
  const ofBound = figures.map((figure) => figure.readingsPerSecond / figure.bound)
  const execsOfBound = figures.map((figure) => figure.execsPerSecond / figure.bound)
  const execsPerReading = figures.map((figure) => figure.execsPerSecond / figure.readingsPerSecond)
  const bound = figures[0]?.bound ?? 0
  const rssGoal = peakRssGoalMegabytes(scenario.nodes)
  const cpuGoal = cpuGoalMs(scenario.qps)
  const readyGoal =
    scenario.nodes <= 10_000 ? ` (goal ≤ ${readyGoalMs / 1000} s: ${ratio(median(all("readyMs")), readyGoalMs)})` : ""
  return [
    `pipeline: ${scenario.nodes} nodes, exec ${scenario.execLatencyMs} ms, QPS ${scenario.qps}, ${scenario.workers} workers` +
      (runs > 1 ? ` (min / median of ${runs} runs)` : "") +
      `; node ${serviceNodeFlags().join(" ") || "(no flags)"}`,
    `  /readyz 200 after start: ${minMedian(
      all("readyMs").map((ms) => ms / 1000),
      2,
    )} s${readyGoal}`,
    `  initial sync: ${minMedian(all("readingsPerSecond"), 1)} readings/s, bound ${bound.toFixed(0)}/s → ${minMedian(ofBound, 2)} of the bound (goal ≥ ${boundGoal.toFixed(2)}); ` +
      `${minMedian(all("execsPerSecond"), 1)} execs/s → ${minMedian(execsOfBound, 2)} of the bound (${minMedian(execsPerReading, 2)} execs per reading)`,
    `  service CPU: ${minMedian(all("cpuPerReadingMs"), 2)} ms per reading (goal ≤ ${cpuGoal} ms: ${ratio(median(all("cpuPerReadingMs")), cpuGoal)})`,
    `  service peak RSS: ${minMedian(all("peakRssMegabytes"), 0)} MB with ${scenario.nodes} device-plugin pods cached (goal ≤ ${rssGoal} MB: ${ratio(median(all("peakRssMegabytes")), rssGoal)})`,
    `  service live heap after a full GC at the end of the sync: ${minMedian(all("liveHeapMegabytes"), 0)} MB`,
    `  pod Ready → records handed to exporters: p50 ${minMedian(
      all("latencyP50Ms").map((ms) => ms / 1000),
      2,
    )} s, ` +
      `p99 ${minMedian(
        all("latencyP99Ms").map((ms) => ms / 1000),
        2,
      )} s (budget: exec ${(scenario.execLatencyMs / 1000).toFixed(2)} s + ≤ 1 s; ${figures[0]?.probes ?? 0} pods)`,
  ]
}
