import { ValueType } from "@opentelemetry/api"
import { millisToHrTime } from "@opentelemetry/core"
import type { Resource } from "@opentelemetry/resources"
import {
  type CollectionResult,
  type DataPoint,
  type IMetricReader,
  MeterProvider,
  type MetricProducer,
} from "@opentelemetry/sdk-metrics"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { closingBudget, ShutdownDeadline } from "../../component/ShutdownDeadline.ts"
import type { GpuRecord } from "../../domain/GpuRecord.ts"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import { gaugeCollection } from "../../metrics/GaugeCollection.ts"
import type { GpuInfoMetric } from "../../metrics/GpuInfoMetric.ts"

export const gpusByNodeMetric = "gpu_serials_gpus"

/** GPUs tracked at most; beyond it new GPUs are not reported (a fleet is far smaller). */
const maxTrackedGpus = 100_000

const descriptor = {
  name: gpusByNodeMetric,
  description: "GPUs known to the OTLP exporter, by model and node.",
  unit: "",
  valueType: ValueType.INT,
} as const

/**
 * `gpu_serials_gpus` counted at each collection from the GPUs held then: a node whose GPUs all left is no
 * longer reported, and every (model, node) pair is, however many. (The SDK's observable gauges keep
 * reporting every pair ever observed and fold those beyond 2,000 into one overflow series.)
 */
const gpusByNode =
  (gpus: ReadonlyMap<string, GpuRecord>, startTime = millisToHrTime(Date.now())): MetricProducer["collect"] =>
  async (): Promise<CollectionResult> => {
    const counts = new Map<string, { model: string; node: string; count: number }>()
    for (const gpu of gpus.values()) {
      const model = gpu.product ?? "unknown"
      const key = JSON.stringify([model, gpu.node])
      const current = counts.get(key)
      if (current === undefined) counts.set(key, { model, node: gpu.node, count: 1 })
      else current.count += 1
    }
    const endTime = millisToHrTime(Date.now())
    const dataPoints: Array<DataPoint<number>> = []
    for (const { model, node, count } of counts.values()) {
      dataPoints.push({ startTime, endTime, attributes: { model, node }, value: count })
    }
    return gaugeCollection("gpu-serials/otlp", descriptor, dataPoints)
  }

/**
 * The GPUs this exporter has seen, as metrics: `gpu_serials_gpus` (count by model and node) and, when
 * the exporter is given one, `gpu_serials_gpu_info` (value 1 per GPU, the service's labels; the
 * service's own is pushed instead when it has a meter). Built from the events the exporter receives:
 * `added`, `moved` and `observed` set a GPU, `removed` deletes it.
 */
export interface GpuFleetMetrics {
  readonly record: (events: ReadonlyArray<InventoryEvent>) => Effect.Effect<void>
  /** `gpu_serials_gpus`, for a reader of the service's meter (`metricProducers`). */
  readonly producer: MetricProducer
}

export interface GpuFleetMetricsOptions {
  readonly resource: Resource
  /**
   * Readers of these metrics only (when the service has no meter of its own), given the producer of
   * `gpu_serials_gpus` to read; they are driven by a meter provider of their own.
   */
  readonly readers: (producer: MetricProducer) => ReadonlyArray<IMetricReader>
  readonly shutdownTimeout: Duration.Duration
  /** Fed with the GPUs seen, when the exporter reports `gpu_serials_gpu_info` itself (its readers read it). */
  readonly gpuInfo?: GpuInfoMetric
}

export const make = Effect.fnUntraced(function* (
  options: GpuFleetMetricsOptions,
): Effect.fn.Return<GpuFleetMetrics, never, Scope.Scope> {
  const gpus = new Map<string, GpuRecord>()
  if (options.gpuInfo !== undefined) {
    const gpuInfo = options.gpuInfo
    const source = { gpus: () => gpus.values(), fields: (record: GpuRecord) => record }
    yield* Effect.acquireRelease(
      Effect.sync(() => gpuInfo.observe(source)),
      () => Effect.sync(() => gpuInfo.forget(source)),
    )
  }
  const producer: MetricProducer = { collect: gpusByNode(gpus) }
  const readers = options.readers(producer)
  if (readers.length > 0) {
    const deadline = yield* Effect.serviceOption(ShutdownDeadline)
    yield* Effect.acquireRelease(
      Effect.sync(() => new MeterProvider({ resource: options.resource, readers: [...readers] })),
      (meterProvider) =>
        Effect.flatMap(closingBudget(deadline, options.shutdownTimeout), (budget) =>
          Effect.tryPromise(() => meterProvider.shutdown({ timeoutMillis: Duration.toMillis(budget) })).pipe(
            Effect.interruptible,
            Effect.timeoutOption(budget),
          ),
        ).pipe(
          Effect.catch((error) =>
            Effect.logWarning("GPU metrics did not shut down cleanly").pipe(
              Effect.annotateLogs({ reason: error.message }),
            ),
          ),
        ),
    )
  }

  const record = (events: ReadonlyArray<InventoryEvent>): Effect.Effect<void> =>
    Effect.sync(() => {
      for (const { record: gpu } of events) {
        if (gpu.event === "removed") {
          gpus.delete(gpu.uuid)
          continue
        }
        if (gpus.size >= maxTrackedGpus && !gpus.has(gpu.uuid)) continue
        gpus.set(gpu.uuid, gpu)
      }
    })

  return { record, producer }
})
