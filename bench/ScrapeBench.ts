import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { GpuRecord } from "../src/domain/GpuRecord.ts"
import { HealthServer } from "../src/health/HealthServer.ts"
import { ReadinessChecks } from "../src/health/ReadinessChecks.ts"
import * as ServiceInstruments from "../src/metrics/ServiceInstruments.ts"
import { ServiceMetrics } from "../src/metrics/ServiceMetrics.ts"

const fleet = 80_000
const concurrency = 20
const seconds = 10
/** The liveness goal: `/healthz` within 100 ms, well inside the kubelet's default probe timeout of 1 s. */
const healthzGoalMs = 100
const load = fileURLToPath(new URL("./ScrapeLoad.ts", import.meta.url))

const gpuOf = (n: number): GpuRecord => ({
  schema: "gpu-serials/v1",
  event: "added",
  id: `id-${n}`,
  cluster: "bench",
  node: `gpu-node-${Math.floor(n / 8)}`,
  machine: `i-${(n >> 3).toString(16).padStart(8, "0")}`,
  source: "gpu-operator/nvidia-device-plugin-daemonset-x2k9q",
  chassis: "",
  gpu: `${1_650_000_000_000 + n}`,
  time: "2025-06-01T12:00:00.000Z",
  uuid: `GPU-${n.toString(16).padStart(8, "0")}-1111-2222-3333-444444444444`,
  index: n % 8,
  product: "NVIDIA H100 80GB HBM3",
  pciBusId: `00000000:${(n % 8).toString(16).padStart(2, "0")}:00.0`,
  driverVersion: "570.148.08",
  cudaVersion: "12.8",
  serialShared: false,
})

/** Runs one part of the load in its own process; answers the JSON line it printed. */
const runLoad = (args: ReadonlyArray<string>): Promise<string> =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [load, ...args], { stdio: ["ignore", "pipe", "inherit"] })
    let text = ""
    child.stdout.on("data", (chunk: Buffer) => {
      text += chunk.toString()
    })
    child.on("error", reject)
    child.on("exit", () => resolve(text))
  })

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] ?? Number.NaN

/**
 * `/metrics` of a fleet of 80,000 GPUs (`gpu_serials_gpu_info`, about 19 MB) scraped by 20 clients at once
 * for 10 s from another process, while a third probes `/healthz` every 50 ms: its latency against the goal.
 */
export const scrapeBench = (): Promise<ReadonlyArray<string>> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const gpus = Array.from({ length: fleet }, (_, n) => gpuOf(n))
      const metrics = yield* ServiceMetrics
      yield* metrics.observeGpus({ gpus: () => gpus, fields: (gpu: GpuRecord) => gpu })
      const { port } = yield* HealthServer
      const base = `http://127.0.0.1:${port}`
      const [scraped, probed] = yield* Effect.promise(() =>
        Promise.all([
          runLoad(["scrape", base, String(concurrency), String(seconds)]),
          runLoad(["probe", base, "1", String(seconds)]),
        ]),
      )
      const { scrapes, bytes } = JSON.parse(scraped) as { readonly scrapes: number; readonly bytes: number }
      const { latencies } = JSON.parse(probed) as { readonly latencies: ReadonlyArray<number> }
      const sorted = [...latencies].sort((a, b) => a - b)
      const p99 = percentile(sorted, 0.99)
      return [
        `/metrics of ${fleet} GPUs under ${concurrency} concurrent scrapes for ${seconds} s (other processes; goal: /healthz ≤ ${healthzGoalMs} ms)`,
        `  /healthz: p50 ${percentile(sorted, 0.5).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${(sorted.at(-1) ?? Number.NaN).toFixed(1)} ms (${(p99 / healthzGoalMs).toFixed(2)}× of the goal at p99, ${sorted.length} probes)`,
        `  /metrics: ${scrapes} scrapes answered, ${(bytes / scrapes / 1024 / 1024).toFixed(1)} MB each, ${(scrapes / seconds).toFixed(1)} scrapes/s`,
      ]
    }).pipe(
      Effect.provide(
        HealthServer.layer({ port: 0, host: "127.0.0.1" }).pipe(
          Layer.provideMerge(ReadinessChecks.layer()),
          Layer.provideMerge(ServiceInstruments.layerWithMeter({ serviceVersion: "bench" })),
        ),
      ),
      Effect.scoped,
    ),
  )
