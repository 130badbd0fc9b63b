import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http"
import { OTLPMetricExporter as ProtobufMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto"
import type { Resource } from "@opentelemetry/resources"
import { PeriodicExportingMetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { GpuInfoMetric } from "../../metrics/GpuInfoMetric.ts"
import { ServiceMeter } from "../../metrics/ServiceMeter.ts"
import * as GpuFleetMetrics from "./GpuFleetMetrics.ts"
import { watchPushes } from "./WatchedMetricExporter.ts"

type MetricExporterOptions = NonNullable<ConstructorParameters<typeof ProtobufMetricExporter>[0]>

export interface OtlpMetricsPushOptions {
  /** Full URL of the metrics endpoint (`…/v1/metrics`). */
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly protocol: "http/protobuf" | "http/json"
  readonly compression: "gzip" | "none"
  readonly timeoutMs: number
  readonly intervalMs: number
  /** The Resource of the pushed metrics when the service has no meter of its own. */
  readonly resource: Resource
  readonly shutdownTimeout: Duration.Duration
}

const metricExporter = (options: OtlpMetricsPushOptions): PushMetricExporter => {
  const exporterOptions: MetricExporterOptions = {
    url: options.url,
    headers: { ...options.headers },
    // The SDK's compression enum has exactly the two configured spellings as values.
    compression: options.compression as NonNullable<MetricExporterOptions["compression"]>,
    timeoutMillis: options.timeoutMs,
  }
  return options.protocol === "http/json"
    ? new JsonMetricExporter(exporterOptions)
    : new ProtobufMetricExporter(exporterOptions)
}

/**
 * Pushes metrics over OTLP every `intervalMs`: the service's own instruments (the same as `/metrics`,
 * `gpu_serials_gpu_info` included when the service has it on) when the service has a meter, plus the GPU
 * fleet gauge. Without a service meter the GPU gauges are pushed, `gpu_serials_gpu_info` built from the
 * exporter's events. Closing the scope exports one last time.
 */
export const start = Effect.fnUntraced(function* (
  options: OtlpMetricsPushOptions,
): Effect.fn.Return<GpuFleetMetrics.GpuFleetMetrics, never, Scope.Scope> {
  const serviceMeter = yield* Effect.serviceOption(ServiceMeter)
  const readerOptions = {
    exporter: yield* watchPushes(metricExporter(options)),
    exportIntervalMillis: options.intervalMs,
    // The SDK refuses an export deadline longer than the interval.
    exportTimeoutMillis: Math.min(options.timeoutMs, options.intervalMs),
  }
  if (Option.isSome(serviceMeter)) {
    const fleet = yield* GpuFleetMetrics.make({
      resource: serviceMeter.value.resource,
      readers: () => [],
      shutdownTimeout: options.shutdownTimeout,
    })
    const reader = new PeriodicExportingMetricReader({ ...readerOptions, metricProducers: [fleet.producer] })
    yield* serviceMeter.value.attachReader(reader)
    return fleet
  }
  const gpuInfo = new GpuInfoMetric()
  return yield* GpuFleetMetrics.make({
    resource: options.resource,
    readers: (fleet) => [new PeriodicExportingMetricReader({ ...readerOptions, metricProducers: [gpuInfo, fleet] })],
    shutdownTimeout: options.shutdownTimeout,
    gpuInfo,
  })
})
