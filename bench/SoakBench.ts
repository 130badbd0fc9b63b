import { type ChildProcess, spawn } from "node:child_process"
import { appendFileSync } from "node:fs"
import { join, resolve as resolvePath } from "node:path"
import type { GpuRecord } from "../src/domain/GpuRecord.ts"
import { freePort } from "../src/health/FreePort.ts"
import { measuredCore, pinToCore, simulatorCore } from "./CorePinning.ts"
import { fleetHistoryAtBound } from "./FleetHistoryBound.ts"
import {
  committedFigures,
  heapFigures,
  repositoryRoot,
  residentFigures,
  serviceAllocatorEnvironment,
  startServiceProcess,
  stopServiceProcess,
  timeToReady,
  writeHeapSnapshot,
} from "./ServiceProcess.ts"

/**
 * The service alone, for a long time, against a simulated cluster that churns and fails in every way it
 * can: does anything it keeps grow? The simulator runs as its own process (`npm run sim`), the service as
 * `gpu-serials run` with the image's V8 flags; each is pinned to a core of its own when there are two.
 * Every `sampleSeconds` the service's heap is measured after a full garbage collection, with compiled code
 * apart (compiled code and bytecode with their metadata grow while V8 compiles, whatever the data does),
 * and what holds the rest of its memory: its RSS split into anonymous and file-backed pages
 * (`/proc/<pid>/smaps_rollup`), V8's committed heap, the anonymous memory beside it (the allocator's
 * arenas, native buffers, stacks), and the external memory and ArrayBuffers V8 knows of. The first
 * `warmUpMinutes` are left out of the figures: the fleet fills and the code is compiled then.
 */
export interface SoakScenario {
  readonly minutes: number
  readonly nodes: number
  readonly sampleSeconds: number
  readonly warmUpMinutes: number
  /** Whether the service serves the fleet page, whose per-process history fills towards its bound. */
  readonly fleetPage: boolean
  /** A folder for two heap snapshots, a minute after the warm-up and at the end, to diff; none when absent. */
  readonly heapSnapshotFolder?: string
  /** A file to append each sample to as a line of JSON while the soak runs, to plot; none when absent. */
  readonly samplesFile?: string
}

export const soakScenario = (
  minutes: number,
  options: { readonly fleetPage?: boolean; readonly heapSnapshotFolder?: string; readonly samplesFile?: string } = {},
): SoakScenario => ({
  minutes,
  nodes: 300,
  sampleSeconds: 30,
  warmUpMinutes: Math.min(3, minutes / 5),
  fleetPage: options.fleetPage ?? true,
  ...(options.heapSnapshotFolder === undefined ? {} : { heapSnapshotFolder: options.heapSnapshotFolder }),
  ...(options.samplesFile === undefined ? {} : { samplesFile: options.samplesFile }),
})

/** Churn and faults per minute or per request: every kind the simulator has, often enough to matter in 30 minutes. */
const simulatorFlags = [
  "--exec-latency",
  "100ms-300ms",
  "--churn-pod-restarts",
  "6",
  "--churn-node-joins",
  "2",
  "--churn-node-leaves",
  "2",
  "--churn-gpu-swaps",
  "2",
  "--churn-readiness-flaps",
  "4",
  "--fault-server-error",
  "0.01",
  "--fault-throttle",
  "0.01",
  "--fault-watch-drop",
  "0.002",
  "--fault-exec-hang",
  "0.005",
  "--fault-exec-exit",
  "0.01",
  "--fault-exec-truncate",
  "0.01",
  "--fault-exec-garbage",
  "0.01",
  "--fault-driver-failures",
  "1",
  "--fault-health",
  "0.02",
  "--fault-health-stage-time",
  "2m",
]

/** The service re-reads every pod each minute and re-affirms GPUs every 5, so every path runs all along. */
const serviceFlags = ["--resync", "1m", "--report-interval", "5m", "--removal-grace", "30s", "--timeout", "5s"]

interface SimulatorProcess {
  readonly child: ChildProcess
  readonly kubeconfigPath: string
}

const startSimulator = (nodes: number): Promise<SimulatorProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        join(repositoryRoot, "packages/kube-sim/src/main.ts"),
        "--nodes",
        String(nodes),
        "--seed",
        "soak",
        ...simulatorFlags,
      ],
      { cwd: repositoryRoot, stdio: ["ignore", "pipe", "inherit"] },
    )
    let pending = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      pending += chunk.toString()
      const line = pending.split("\n")[0]
      if (pending.includes("\n") && line !== undefined) {
        child.stdout?.removeAllListeners("data")
        child.stdout?.resume()
        resolve({ child, kubeconfigPath: (JSON.parse(line) as { kubeconfigPath: string }).kubeconfigPath })
      }
    })
    child.once("exit", (code) => reject(new Error(`the simulator exited (${code}) before it listened`)))
  })

/** One measurement, `minutes` after the service was ready. */
interface SoakSample {
  readonly minutes: number
  readonly gpus: number
  readonly dataMegabytes: number
  readonly codeMegabytes: number
  readonly rssMegabytes: number
  readonly heapCommittedMegabytes: number
  readonly externalMegabytes: number
  readonly arrayBuffersMegabytes: number
  readonly anonymousMegabytes: number
  readonly fileBackedMegabytes: number
  /** Anonymous resident memory beside V8's committed heap: the allocator's arenas, native buffers, stacks. */
  readonly outsideHeapMegabytes: number
  readonly activeResources: number
}

/** The figures a sample has in megabytes, each fitted to time. */
type SampleFigure = Exclude<keyof SoakSample, "minutes" | "gpus" | "activeResources">

/**
 * How a figure moves over the soak: a least-squares fit `figure = a + slope·minutes + perGpu·gpus`, so
 * growth that follows the fleet's size (GPUs join and leave with the churn) is told apart from growth
 * with time alone, which is what a leak looks like. The slope's standard error says how sure the fit is.
 */
export interface Trend {
  readonly first: number
  readonly last: number
  readonly min: number
  readonly max: number
  readonly slopePerMinute: number
  readonly slopeStandardError: number
  /** Megabytes per known GPU, from the same fit. */
  readonly perGpu: number
}

/** One figure at one time, with the GPUs the service knew then. */
export interface TrendPoint {
  readonly minutes: number
  readonly gpus: number
  readonly value: number
}

/** Solves `matrix · x = vector` for a small symmetric system by Gauss-Jordan elimination; undefined when singular. */
const solve = (
  matrix: ReadonlyArray<ReadonlyArray<number>>,
  vector: ReadonlyArray<number>,
): Array<number> | undefined => {
  const size = vector.length
  const rows = matrix.map((row, at) => [...row, vector[at] ?? 0])
  for (let column = 0; column < size; column++) {
    let pivot = column
    for (let row = column + 1; row < size; row++)
      if (Math.abs(rows[row]?.[column] ?? 0) > Math.abs(rows[pivot]?.[column] ?? 0)) pivot = row
    const pivotRow = rows[pivot] as Array<number>
    if (Math.abs(pivotRow[column] ?? 0) < 1e-12) return undefined
    rows[pivot] = rows[column] as Array<number>
    rows[column] = pivotRow
    for (let row = 0; row < size; row++) {
      if (row === column) continue
      const current = rows[row] as Array<number>
      const factor = (current[column] ?? 0) / (pivotRow[column] ?? 1)
      for (let at = column; at <= size; at++) current[at] = (current[at] ?? 0) - factor * (pivotRow[at] ?? 0)
    }
  }
  return rows.map((row, at) => (row[size] ?? 0) / (row[at] ?? 1))
}

export const trendOf = (points: ReadonlyArray<TrendPoint>): Trend => {
  const values = points.map((point) => point.value)
  const summary = {
    first: values[0] ?? 0,
    last: values[points.length - 1] ?? 0,
    min: Math.min(...values),
    max: Math.max(...values),
  }
  const gpusVary = points.some((point) => point.gpus !== points[0]?.gpus)
  const regressors = (point: TrendPoint): Array<number> =>
    gpusVary ? [1, point.minutes, point.gpus] : [1, point.minutes]
  const width = gpusVary ? 3 : 2
  const normal = Array.from({ length: width }, () => new Array<number>(width).fill(0))
  const moment = new Array<number>(width).fill(0)
  for (const point of points) {
    const row = regressors(point)
    for (let i = 0; i < width; i++) {
      moment[i] = (moment[i] ?? 0) + (row[i] ?? 0) * point.value
      for (let j = 0; j < width; j++)
        (normal[i] as Array<number>)[j] = (normal[i]?.[j] ?? 0) + (row[i] ?? 0) * (row[j] ?? 0)
    }
  }
  const fit = solve(normal, moment)
  // The slope's variance is σ² times the minutes entry of the inverse of the normal matrix.
  const unitMinutes = solve(normal, [0, 1, 0].slice(0, width))
  if (fit === undefined || unitMinutes === undefined || points.length <= width)
    return { ...summary, slopePerMinute: 0, slopeStandardError: Number.POSITIVE_INFINITY, perGpu: 0 }
  const residuals = points.reduce((sum, point) => {
    const predicted = regressors(point).reduce((total, x, at) => total + x * (fit[at] ?? 0), 0)
    return sum + (point.value - predicted) ** 2
  }, 0)
  const variance = residuals / (points.length - width)
  return {
    ...summary,
    slopePerMinute: fit[1] ?? 0,
    slopeStandardError: Math.sqrt(variance * (unitMinutes[1] ?? 0)),
    perGpu: gpusVary ? (fit[2] ?? 0) : 0,
  }
}

/** Flat: the slope is within two standard errors of zero, i.e. no growth the samples can tell from noise. */
export const isFlat = (trend: Trend): boolean => Math.abs(trend.slopePerMinute) <= 2 * trend.slopeStandardError

const trendLine = (name: string, trend: Trend): string =>
  `  ${name.padEnd(13)} ${trend.first.toFixed(1)} → ${trend.last.toFixed(1)} MB (range ${trend.min.toFixed(1)}–${trend.max.toFixed(1)}), ` +
  `slope with the fleet's size held ${trend.slopePerMinute >= 0 ? "+" : ""}${trend.slopePerMinute.toFixed(4)} ± ${trend.slopeStandardError.toFixed(4)} MB/min` +
  ` (${(trend.slopePerMinute * 60 * 24).toFixed(1)} MB/day), ${(trend.perGpu * 1024 * 1024).toFixed(0)} B per GPU, ${isFlat(trend) ? "flat" : "GROWING"}`

/** The GPUs the service knows now, from its own `/metrics`. */
const gpusKnown = async (port: number): Promise<number> => {
  const page = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) }).then((answer) =>
    answer.text(),
  )
  const line = page.split("\n").find((entry) => entry.startsWith("gpu_serials_gpus_known "))
  return Number(line?.split(" ")[1] ?? Number.NaN)
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The service's allocator settings in words. */
const allocatorSettings = (): string => {
  const settings = Object.entries(serviceAllocatorEnvironment())
  return settings.length === 0 ? "glibc's defaults" : settings.map(([name, value]) => `${name}=${value}`).join(" ")
}

export const soakBench = async (scenario: SoakScenario): Promise<ReadonlyArray<string>> => {
  const simulator = await startSimulator(scenario.nodes)
  const port = await freePort()
  const events = new Map<string, number>()
  /** The records the fleet page's history takes, to fill one to its bound after the soak. */
  const historyRecords: Array<GpuRecord> = []
  const service = startServiceProcess(
    [
      "--cluster-name",
      "soak",
      "--kubeconfig",
      simulator.kubeconfigPath,
      "--server-port",
      String(port),
      ...serviceFlags,
      ...(scenario.fleetPage ? [] : ["--no-fleet-page"]),
    ],
    (record) => {
      events.set(record.event, (events.get(record.event) ?? 0) + 1)
      if (record.event !== "observed") historyRecords.push(record as GpuRecord)
    },
  )
  const pinned = pinToCore(simulator.child.pid, simulatorCore) && pinToCore(service.child.pid, measuredCore)
  const samples: Array<SoakSample> = []
  const snapshots: Array<string> = []
  const snapshot = async (minutes: number): Promise<void> => {
    if (scenario.heapSnapshotFolder === undefined) return
    const path = resolvePath(scenario.heapSnapshotFolder, `soak-${minutes.toFixed(1)}min.heapsnapshot`)
    await writeHeapSnapshot(service, path)
    snapshots.push(path)
  }
  try {
    await timeToReady(service, port, 120_000)
    const readyAt = performance.now()
    const endAt = readyAt + scenario.minutes * 60_000
    while (performance.now() < endAt) {
      if (service.child.exitCode !== null)
        throw new Error(`the service exited (${service.child.exitCode}) during the soak`)
      const gpus = await gpusKnown(port)
      const heap = await heapFigures(service)
      const committed = await committedFigures(service)
      const resident = residentFigures(service.child.pid ?? 0)
      const sample: SoakSample = {
        minutes: (performance.now() - readyAt) / 60_000,
        gpus,
        dataMegabytes: heap.liveMegabytes - heap.codeMegabytes,
        codeMegabytes: heap.codeMegabytes,
        rssMegabytes: resident.rssMegabytes,
        heapCommittedMegabytes: committed.heapCommittedMegabytes,
        externalMegabytes: committed.externalMegabytes,
        arrayBuffersMegabytes: committed.arrayBuffersMegabytes,
        anonymousMegabytes: resident.anonymousMegabytes,
        fileBackedMegabytes: resident.fileBackedMegabytes,
        outsideHeapMegabytes: resident.anonymousMegabytes - committed.heapCommittedMegabytes,
        activeResources: committed.activeResources,
      }
      samples.push(sample)
      if (scenario.samplesFile !== undefined) appendFileSync(scenario.samplesFile, `${JSON.stringify(sample)}\n`)
      const minutes = (performance.now() - readyAt) / 60_000
      if (snapshots.length === 0 && minutes >= scenario.warmUpMinutes + 1) await snapshot(minutes)
      await sleep(Math.min(scenario.sampleSeconds * 1000, Math.max(0, endAt - performance.now())))
    }
    await snapshot((performance.now() - readyAt) / 60_000)
  } finally {
    await stopServiceProcess(service)
    simulator.child.kill("SIGTERM")
  }
  const kept = samples.filter((sample) => sample.minutes >= scenario.warmUpMinutes)
  if (kept.length < 3) throw new Error(`the soak kept ${kept.length} samples: run it for longer`)
  const trendOfField = (field: SampleFigure): Trend =>
    trendOf(kept.map((sample) => ({ minutes: sample.minutes, gpus: sample.gpus, value: sample[field] })))
  const eventCounts = ["added", "moved", "removed", "observed", "health"]
    .map((kind) => `${kind} ${events.get(kind) ?? 0}`)
    .join(", ")
  const bound = fleetHistoryAtBound(historyRecords)
  return [
    `soak: the service alone for ${scenario.minutes} min against ${scenario.nodes} simulated nodes with churn and faults` +
      `${scenario.fleetPage ? "" : ", no fleet page"}` +
      ` (${pinned ? "simulator on core 0, service on core 1" : "not pinned"}); ${kept.length} samples after` +
      ` ${scenario.warmUpMinutes} min of warm-up, every ${scenario.sampleSeconds} s, heap after a full GC;` +
      ` allocator ${allocatorSettings()}`,
    trendLine("live heap", trendOfField("dataMegabytes")),
    trendLine("code", trendOfField("codeMegabytes")),
    trendLine("RSS", trendOfField("rssMegabytes")),
    trendLine("  anonymous", trendOfField("anonymousMegabytes")),
    trendLine("  file-backed", trendOfField("fileBackedMegabytes")),
    trendLine("V8 committed", trendOfField("heapCommittedMegabytes")),
    trendLine("outside V8", trendOfField("outsideHeapMegabytes")),
    trendLine("external", trendOfField("externalMegabytes")),
    trendLine("  buffers", trendOfField("arrayBuffersMegabytes")),
    `  active resources (sockets, servers, timers): ${kept[0]?.activeResources ?? 0} → ${kept[kept.length - 1]?.activeResources ?? 0}` +
      ` (range ${Math.min(...kept.map((sample) => sample.activeResources))}–${Math.max(...kept.map((sample) => sample.activeResources))});` +
      " outside V8: anonymous resident memory less V8's committed heap",
    `  fleet page's history (bounded${scenario.fleetPage ? "" : ", off in this run"}): the soak sent it ${historyRecords.length} entries;` +
      ` full, it holds ${bound.entries} entries of ${bound.gpus} GPUs in ${bound.megabytes.toFixed(1)} MB of live heap` +
      " (the soak's own events replayed as new GPUs)",
    ...snapshots.map((path) => `  heap snapshot: ${path}`),
    `  GPUs known: ${kept[0]?.gpus ?? 0} → ${kept[kept.length - 1]?.gpus ?? 0} (range ${Math.min(...kept.map((sample) => sample.gpus))}–${Math.max(...kept.map((sample) => sample.gpus))}); events: ${eventCounts}`,
  ]
}
