import { startSimulatedCluster } from "@gpu-serials/kube-sim"
import { freePort } from "../src/telemetry/FreePort.ts"
import { summarise } from "./Sampling.ts"
import { cpuMillis, peakRssMegabytes, startServiceProcess, stopServiceProcess } from "./ServiceProcess.ts"

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

/** Healthy models only, in the default proportions: every node gives records. */
const benchModelMix = { "h100-hgx": 30, "gb200-nvl72": 10, "a100-mig": 15, t4: 20, l40s: 15, rtx4090: 5 }
const latencyProbes = 60
const probesPerSecond = 5
const syncTimeoutMs = 600_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const waitUntil = async (condition: () => boolean, timeoutMs: number, what: string): Promise<void> => {
  const deadline = performance.now() + timeoutMs
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

/**
 * One pipeline scenario: the simulated cluster in this process, `gpu-serials run` in another. Measures
 * the initial sync's readings per second against min(QPS, workers / exec latency), the service's CPU per
 * reading and its peak RSS, then the latency from pod Ready to records, on probe pods made ready one by
 * one once the service is idle (so not rate-limited).
 */
export const pipelineBench = async (scenario: PipelineScenario): Promise<ReadonlyArray<string>> => {
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
  const pid = service.pid ?? 0
  try {
    const synced = scenario.nodes - probes.length
    await waitUntil(() => firstRecord.size >= 1, syncTimeoutMs, "the first record")
    const cpuAtFirst = cpuMillis(pid)
    const execsAtFirst = cluster.stats().execs
    const startedAt = Math.min(...firstRecord.values())
    await waitUntil(() => firstRecord.size >= synced, syncTimeoutMs, "the initial sync")
    const finishedAt = Math.max(...firstRecord.values())
    const cpuSpent = cpuMillis(pid) - cpuAtFirst
    const seconds = (finishedAt - startedAt) / 1000
    const readingsPerSecond = (synced - 1) / seconds
    // A node on a driver older than 570 answers the CSV query with an error first: its first reading takes two execs.
    const execsPerSecond = (cluster.stats().execs - execsAtFirst) / seconds
    const bound = Math.min(scenario.qps, scenario.workers / (scenario.execLatencyMs / 1000))

    await sleep(1_000)
    const readyAt = new Map<string, number>()
    for (const node of probes) {
      readyAt.set(node, performance.now())
      cluster.setPodReady(node, true)
      await sleep(1000 / probesPerSecond)
    }
    await waitUntil(() => probes.every((node) => firstRecord.has(node)), 60_000, "the probe pods' records")
    const latency = summarise(probes.map((node) => (firstRecord.get(node) ?? 0) - (readyAt.get(node) ?? 0)))
    const rss = peakRssMegabytes(pid)
    return [
      `pipeline: ${scenario.nodes} nodes, exec ${scenario.execLatencyMs} ms, QPS ${scenario.qps}, ${scenario.workers} workers`,
      `  initial sync: ${readingsPerSecond.toFixed(1)} readings/s, bound ${bound.toFixed(0)}/s → ${(readingsPerSecond / bound).toFixed(2)} of the bound (budget ≥ 0.90); ` +
        `${execsPerSecond.toFixed(1)} execs/s → ${(execsPerSecond / bound).toFixed(2)} of the bound (${(execsPerSecond / readingsPerSecond).toFixed(2)} execs per reading)`,
      `  service CPU: ${(cpuSpent / (synced - 1)).toFixed(2)} ms per reading (budget ≤ 3 ms)`,
      `  service peak RSS: ${rss.toFixed(0)} MB with ${scenario.nodes} device-plugin pods cached (budget ≤ 250 MB)`,
      `  pod Ready → records handed to exporters: p50 ${(latency.medianMs / 1000).toFixed(2)} s, p99 ${(latency.p99Ms / 1000).toFixed(2)} s (budget: exec ${(scenario.execLatencyMs / 1000).toFixed(2)} s + ≤ 1 s; ${latency.runs} pods)`,
    ]
  } finally {
    await stopServiceProcess(service)
    await cluster.close()
  }
}
