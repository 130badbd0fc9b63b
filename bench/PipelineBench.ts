import { loadavg } from "node:os"
import { freePort } from "../src/health/FreePort.ts"
import { type SimulatorCounters, startControlledSimulator } from "./ControlledSimulator.ts"
import { measuredCore, pinToCore, simulatorCore } from "./CorePinning.ts"
import { floorExecPaths, measureExecFloor } from "./ExecFloor.ts"
import { type MemorySample, memoryBreakdown, startMemorySampler } from "./MemorySampler.ts"
import { median, minMedian, summarise } from "./Sampling.ts"
import {
  cpuMillis,
  liveHeapMegabytes,
  peakRssMegabytes,
  type ServiceProcess,
  serviceAllocatorEnvironment,
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

/** The scenarios of PRODUCT §10 at a fleet size: QPS 50 with 16 workers, QPS 1000 with 64, 200 ms execs. */
export const pipelineScenariosAt = (nodes: number): ReadonlyArray<PipelineScenario> => [
  { nodes, qps: 50, workers: 16, execLatencyMs: 200 },
  { nodes, qps: 1_000, workers: 64, execLatencyMs: 200 },
]

/** The fleet-scale case, run only when asked for (`npm run bench -- pipeline50k`): its sync takes minutes. */
export const fleetScaleScenario: PipelineScenario = { nodes: 50_000, qps: 1_000, workers: 64, execLatencyMs: 200 }

/** PRODUCT §10's budgets: peak RSS by fleet size, CPU per reading by QPS, time to `/readyz`, readings of the bound. */
const peakRssGoalMegabytes = (nodes: number): number => (nodes <= 2_000 ? 200 : nodes <= 10_000 ? 220 : 450)
const cpuGoalMs = (qps: number): number => (qps <= 50 ? 2.0 : 1.2)
const readyGoalMs = 2_000
const boundGoal = 0.95

/** Healthy models only, in the default proportions: every node gives records. */
const benchModelMix = { "h100-hgx": 30, "gb200-nvl72": 10, "a100-mig": 15, t4: 20, l40s: 15, rtx4090: 5 }
const latencyProbes = 60
/** How often the service's memory is sampled from its spawn to the end of the initial sync. */
const memorySampleIntervalMs = 250
const probesPerSecond = 5
/** Deadline of the initial sync: 10 minutes, or 50 ms per node for larger fleets on a loaded machine. */
const syncTimeoutMs = (nodes: number): number => Math.max(600_000, nodes * 50)

const ratio = (value: number, goal: number): string => `${(value / goal).toFixed(2)}×`

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits for `condition` while the service runs; its exit or the deadline fails the run. */
const waitUntil = async (
  service: ServiceProcess,
  condition: () => boolean,
  timeoutMs: number,
  what: string,
): Promise<void> => {
  const deadline = performance.now() + timeoutMs
  while (!condition()) {
    if (service.child.exitCode !== null)
      throw new Error(`the service exited (${service.child.exitCode}) while the bench waited for ${what}`)
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

/** Milliseconds since the epoch, as the simulator process stamps a pod's turn to Ready. */
const nowMs = (): number => performance.timeOrigin + performance.now()

/** Full and resumed TLS handshakes between two readings of the simulator's counters, where it counts them. */
interface Handshakes {
  readonly full: number
  readonly resumed: number
}

const handshakesBetween = (before: SimulatorCounters, after: SimulatorCounters): Handshakes | undefined => {
  if (after.tlsHandshakes === undefined || after.tlsResumed === undefined) return undefined
  const resumed = after.tlsResumed - (before.tlsResumed ?? 0)
  return { full: after.tlsHandshakes - (before.tlsHandshakes ?? 0) - resumed, resumed }
}

const handshakesText = (handshakes: Handshakes | undefined): string =>
  handshakes === undefined ? "" : `; TLS handshakes (first run) ${handshakes.full} full + ${handshakes.resumed} resumed`

/** What one run of a scenario measured. */
interface PipelineFigures {
  readonly readingsPerSecond: number
  /** Execs per node read in the sync, from the service's start (a refused CSV query then XML makes two). */
  readonly execsPerReading: number
  /** API requests other than execs per node read in the sync (the node-label patches, the lists and watches). */
  readonly otherRequestsPerReading: number
  readonly bound: number
  readonly cpuPerReadingMs: number
  readonly floorCpuPerExecMs: number
  readonly floorExecsPerSecond: number
  readonly floorFailures: number
  /** TLS handshakes the API server completed for the service's sync and for the floor's execs. */
  readonly handshakes: Handshakes | undefined
  readonly floorHandshakes: Handshakes | undefined
  /** The machine's 1-minute load average at the end of the run: other work on the cores shows here. */
  readonly loadAverage: number
  readonly peakRssMegabytes: number
  readonly liveHeapMegabytes: number
  /** The service's memory sampled (no GC forced) at the first reading, at the highest RSS and at the sync's end. */
  readonly memoryAtFirstReading: MemorySample | undefined
  readonly memoryAtPeak: MemorySample | undefined
  readonly memoryAtEnd: MemorySample | undefined
  readonly readyMs: number
  /** API requests, and of them execs, the simulator had counted from the spawn to just after the first `/readyz` 200. */
  readonly requestsAtReady: number
  readonly execsAtReady: number
  readonly latencyP50Ms: number
  readonly latencyP99Ms: number
  /** From a pod's turn to Ready to the time on its first record (the reading's, the service's clock). */
  readonly readingLatencyP50Ms: number
  readonly readingLatencyP99Ms: number
  readonly probes: number
  readonly pinned: boolean
  /** The simulator's scheme and the exec protocol it chose, e.g. `https, v5.channel.k8s.io`. */
  readonly transport: string
}

/**
 * One run of a pipeline scenario: the simulated cluster in a process of its own on core 0, `gpu-serials run`
 * (labels on, the image's V8 flags) on core 1. Measures the time from the spawn to `/readyz` 200, the
 * initial sync's readings per second from the first record to the last node's against min(QPS, workers /
 * exec latency), the other API requests in that time (the node-label patches, which take tokens from the
 * same QPS bucket), the service's CPU per reading from /proc over that time, its peak RSS and its live heap
 * after a full GC at the end of the sync; then the latency from a pod's turn to Ready (the simulator's
 * clock) to its first record's line on stdout, on held-back pods made Ready one by one once the service is
 * idle; then the floor: a minimal exec client on core 1 running as many execs as the sync read, against the
 * same simulator at the same QPS and concurrency.
 */
const measurePipeline = async (scenario: PipelineScenario): Promise<PipelineFigures> => {
  const simulator = await startControlledSimulator({
    options: {
      nodes: scenario.nodes,
      modelMix: benchModelMix,
      seed: `bench-${scenario.nodes}`,
      execLatency: scenario.execLatencyMs,
      podTimings: { startMs: 0, readyMs: 0, terminationMs: 0 },
    },
    heldBack: latencyProbes,
  })
  const cluster = simulator.started
  const probes = cluster.heldBack
  const countersAtStart = await simulator.counters()
  /** When each node's first record reached the bench (epoch ms), and the time the service stamped on it. */
  const firstRecord = new Map<string, number>()
  const firstReading = new Map<string, number>()
  try {
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
      ],
      (record) => {
        if (firstRecord.has(record.node)) return
        firstRecord.set(record.node, nowMs())
        firstReading.set(record.node, Date.parse((record as { readonly time?: string }).time ?? ""))
      },
    )
    const pid = service.child.pid ?? 0
    let pinned = simulator.pinned && pinToCore(pid, measuredCore)
    const memory = startMemorySampler(service, memorySampleIntervalMs)
    let figures: Omit<
      PipelineFigures,
      "floorCpuPerExecMs" | "floorExecsPerSecond" | "floorFailures" | "floorHandshakes" | "loadAverage" | "transport"
    >
    try {
      const ready = timeToReady(service, port, syncTimeoutMs(scenario.nodes))
      ready.catch(() => undefined)
      // What had reached the API server when readiness was first answered: readings or label patches before it show here.
      const countersAtReady = ready.then(() => simulator.counters())
      countersAtReady.catch(() => undefined)
      const synced = scenario.nodes - probes.length
      await waitUntil(service, () => firstRecord.size >= 1, syncTimeoutMs(scenario.nodes), "the first record")
      // Again, for threads the service started after the first pinning.
      pinned = pinned && pinToCore(pid, measuredCore)
      const cpuAtFirst = cpuMillis(pid)
      const firstReadingAtMs = performance.now() - service.startedAt
      const startedAt = Math.min(...firstRecord.values())
      await waitUntil(service, () => firstRecord.size >= synced, syncTimeoutMs(scenario.nodes), "the initial sync")
      const cpuSpent = cpuMillis(pid) - cpuAtFirst
      const countersAtLast = await simulator.counters()
      const finishedAt = Math.max(...firstRecord.values())
      const seconds = (finishedAt - startedAt) / 1000
      const readingsPerSecond = (synced - 1) / seconds
      // Counted from the service's start: the lists and watches are a handful against a request per node.
      const execs = countersAtLast.execs - countersAtStart.execs
      const otherRequests = countersAtLast.requests - countersAtStart.requests - execs
      const handshakes = handshakesBetween(countersAtStart, countersAtLast)
      const samples = await memory.stop()
      const memoryAtPeak = samples.reduce<MemorySample | undefined>(
        (peak, sample) => (peak === undefined || sample.rssMegabytes > peak.rssMegabytes ? sample : peak),
        undefined,
      )
      const liveHeap = await liveHeapMegabytes(service)
      const readyMs = await ready
      const atReady = await countersAtReady

      await sleep(1_000)
      const readyAt = await simulator.makeReady(probes, probesPerSecond)
      await waitUntil(service, () => probes.every((node) => firstRecord.has(node)), 60_000, "the probe pods' records")
      const latency = summarise(probes.map((node) => (firstRecord.get(node) ?? 0) - (readyAt[node] ?? 0)))
      const readingLatency = summarise(probes.map((node) => (firstReading.get(node) ?? 0) - (readyAt[node] ?? 0)))
      figures = {
        readingsPerSecond,
        execsPerReading: execs / synced,
        otherRequestsPerReading: otherRequests / synced,
        bound: Math.min(scenario.qps, scenario.workers / (scenario.execLatencyMs / 1000)),
        cpuPerReadingMs: cpuSpent / (synced - 1),
        peakRssMegabytes: peakRssMegabytes(pid),
        liveHeapMegabytes: liveHeap,
        memoryAtFirstReading: samples.find((sample) => sample.atMs >= firstReadingAtMs),
        memoryAtPeak,
        memoryAtEnd: samples.at(-1),
        readyMs,
        requestsAtReady: atReady.requests - countersAtStart.requests,
        execsAtReady: atReady.execs - countersAtStart.execs,
        latencyP50Ms: latency.medianMs,
        latencyP99Ms: latency.p99Ms,
        readingLatencyP50Ms: readingLatency.medianMs,
        readingLatencyP99Ms: readingLatency.p99Ms,
        probes: latency.runs,
        pinned,
        handshakes,
      }
    } finally {
      await memory.stop()
      await stopServiceProcess(service)
    }
    const synced = new Set(cluster.pods.map((pod) => pod.node).filter((node) => !probes.includes(node)))
    const countersBeforeFloor = await simulator.counters()
    const floor = await measureExecFloor({
      kubeconfigPath: cluster.kubeconfigPath,
      paths: floorExecPaths(cluster, synced),
      qps: scenario.qps,
      workers: scenario.workers,
    })
    return {
      ...figures,
      pinned: figures.pinned && floor.pinned,
      floorCpuPerExecMs: floor.cpuPerExecMs,
      floorExecsPerSecond: floor.execs / floor.seconds,
      floorHandshakes: handshakesBetween(countersBeforeFloor, await simulator.counters()),
      floorFailures: floor.failures,
      loadAverage: loadavg()[0] ?? 0,
      transport: `${floor.secure ? "https" : "http"}, ${floor.protocol}`,
    }
  } finally {
    await simulator.close()
  }
}

/** The allocator settings the service ran with, as `NAME=value`; glibc's defaults when none. */
const allocatorText = (): string =>
  Object.entries(serviceAllocatorEnvironment())
    .map(([name, value]) => `${name}=${value}`)
    .join(" ") || "glibc's defaults"

/** The service's memory of one run, sampled every 250 ms without forcing a collection: where its RSS went. */
const memoryLines = (figure: PipelineFigures, run: string): ReadonlyArray<string> => {
  const line = (when: string, sample: MemorySample | undefined): ReadonlyArray<string> =>
    sample === undefined ? [] : [`    ${when}: ${memoryBreakdown(sample)}`]
  return [
    `  service memory (${run}sampled every ${memorySampleIntervalMs} ms, no GC forced; peak RSS ${figure.peakRssMegabytes.toFixed(0)} MB):`,
    ...line("at the first reading", figure.memoryAtFirstReading),
    ...line("at the highest sample", figure.memoryAtPeak),
    ...line("at the end of the sync", figure.memoryAtEnd),
  ]
}

/** A scenario run `runs` times, each figure as min / median of the runs, with its goal and ratio. */
export const pipelineBench = async (scenario: PipelineScenario, runs = 1): Promise<ReadonlyArray<string>> => {
  const figures: Array<PipelineFigures> = []
  for (let run = 0; run < runs; run++) figures.push(await measurePipeline(scenario))
  const all = <K extends keyof PipelineFigures>(key: K): ReadonlyArray<number> =>
    figures.map((figure) => Number(figure[key]))
  const bound = figures[0]?.bound ?? 0
  const ofBound = figures.map((figure) => figure.readingsPerSecond / figure.bound)
  // What the label patches leave of the QPS bucket for execs, when that is the tighter limit.
  const ofBoundLeft = figures.map(
    (figure) =>
      figure.readingsPerSecond /
      Math.min(
        scenario.qps / (1 + figure.otherRequestsPerReading / figure.execsPerReading),
        scenario.workers / (scenario.execLatencyMs / 1000),
      ),
  )
  const tokensOfQps = figures.map(
    (figure) => (figure.readingsPerSecond * (figure.execsPerReading + figure.otherRequestsPerReading)) / scenario.qps,
  )
  const toFloor = figures.map((figure) => figure.cpuPerReadingMs / figure.floorCpuPerExecMs)
  const rssGoal = peakRssGoalMegabytes(scenario.nodes)
  const cpuGoal = cpuGoalMs(scenario.qps)
  const readyGoal =
    scenario.nodes <= 10_000 ? ` (goal ≤ ${readyGoalMs / 1000} s: ${ratio(median(all("readyMs")), readyGoalMs)})` : ""
  const pinning = figures.every((figure) => figure.pinned)
    ? `simulator on core ${simulatorCore}, service and floor on core ${measuredCore}`
    : "NOT pinned"
  const seconds = (values: ReadonlyArray<number>): string =>
    minMedian(
      values.map((ms) => ms / 1000),
      2,
    )
  const floorFailures = figures.reduce((sum, figure) => sum + figure.floorFailures, 0)
  return [
    `pipeline: ${scenario.nodes} nodes, exec ${scenario.execLatencyMs} ms, QPS ${scenario.qps}, ${scenario.workers} workers, labels on` +
      (runs > 1 ? ` (min / median of ${runs} runs)` : "") +
      `; simulator ${figures[0]?.transport ?? "?"}; ${pinning}; node ${serviceNodeFlags().join(" ") || "(no flags)"}; ` +
      `allocator ${allocatorText()}; ` +
      `load average ${minMedian(all("loadAverage"), 1)}`,
    `  /readyz 200 after start: ${seconds(all("readyMs"))} s${readyGoal}; the API server had answered ` +
      `${minMedian(all("requestsAtReady"), 0)} requests by then, ${minMedian(all("execsAtReady"), 0)} of them execs`,
    `  initial sync: ${minMedian(all("readingsPerSecond"), 1)} readings/s, bound ${bound.toFixed(0)}/s → ${minMedian(ofBound, 2)} of the bound (goal ≥ ${boundGoal.toFixed(2)}); ` +
      `${minMedian(ofBoundLeft, 2)} of what the label patches leave of it`,
    `  API requests per reading: ${minMedian(all("execsPerReading"), 2)} execs + ${minMedian(all("otherRequestsPerReading"), 2)} others ` +
      `(node-label patches, lists, watches), all from one QPS bucket → ${minMedian(tokensOfQps, 2)} of QPS` +
      `${handshakesText(figures[0]?.handshakes)}`,
    `  service CPU: ${minMedian(all("cpuPerReadingMs"), 2)} ms per reading (goal ≤ ${cpuGoal} ms: ${ratio(median(all("cpuPerReadingMs")), cpuGoal)})`,
    `  floor (a bare exec client, same TLS and exec protocol, same execs, QPS and concurrency): ${minMedian(all("floorCpuPerExecMs"), 2)} ms CPU per exec, ` +
      `${minMedian(all("floorExecsPerSecond"), 1)} execs/s${floorFailures > 0 ? ` (${floorFailures} exited non-zero)` : ""}` +
      `${handshakesText(figures[0]?.floorHandshakes)}; ` +
      `service CPU per reading / floor CPU per exec: ${minMedian(toFloor, 1)}×`,
    `  service peak RSS: ${minMedian(all("peakRssMegabytes"), 0)} MB with ${scenario.nodes} device-plugin pods cached (goal ≤ ${rssGoal} MB: ${ratio(median(all("peakRssMegabytes")), rssGoal)})`,
    `  service live heap after a full GC at the end of the sync: ${minMedian(all("liveHeapMegabytes"), 0)} MB`,
    ...figures.flatMap((figure, run) => memoryLines(figure, runs > 1 ? `run ${run + 1}, ` : "")),
    `  pod Ready (simulator's clock) → the reading (its record's time): p50 ${seconds(all("readingLatencyP50Ms"))} s, ` +
      `p99 ${seconds(all("readingLatencyP99Ms"))} s; → its first record on stdout: p50 ${seconds(all("latencyP50Ms"))} s, ` +
      `p99 ${seconds(all("latencyP99Ms"))} s (budget: exec ${(scenario.execLatencyMs / 1000).toFixed(2)} s + ≤ 1 s; ${figures[0]?.probes ?? 0} pods)`,
  ]
}
