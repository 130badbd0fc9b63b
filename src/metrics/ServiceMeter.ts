import type { IncomingMessage, ServerResponse } from "node:http"
import type { MeterProvider as MeterProviderApi } from "@opentelemetry/api"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import { defaultResource, type Resource, resourceFromAttributes } from "@opentelemetry/resources"
import {
  type CollectionResult,
  type IMetricReader,
  MeterProvider,
  type MetricCollectOptions,
  type MetricProducer,
  MetricReader,
} from "@opentelemetry/sdk-metrics"
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { closingBudget, ShutdownDeadline } from "../component/ShutdownDeadline.ts"

export const serviceName = "gpu-serials"

export interface ServiceMeterOptions {
  readonly serviceVersion: string
  /** `service.instance.id`; a random UUID when absent (the OpenTelemetry recommendation). */
  readonly serviceInstanceId?: string
  /** More resource attributes (e.g. `k8s.cluster.name`); the service attributes above win. */
  readonly resourceAttributes?: Readonly<Record<string, string>>
  /** More readers of the same instruments, e.g. an OTLP `PeriodicExportingMetricReader`. */
  readonly readers?: ReadonlyArray<IMetricReader>
  /** How long closing the layer waits for the readers' last export; default 5s. */
  readonly shutdownTimeout?: Duration.Input
}

/** Registered with the provider only so that readers made after it can read the same instruments. */
class SharedCollection extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/**
 * Metrics made outside the SDK's instruments, one series per GPU for instance, which the SDK's storage and
 * Prometheus serializer do not scale to: attached readers collect them as a producer, and `/metrics`
 * writes the text they write themselves.
 */
export interface ExtraMetrics extends MetricProducer {
  /**
   * Their Prometheus text exposition (`# HELP`, `# TYPE` and samples, each line ending in `\n`) in pieces
   * of whole lines, each cheap to make, so that writing a large one leaves the event loop free in between;
   * nothing when there is none.
   */
  readonly prometheusText: () => Iterable<string>
}

/** The extra metrics added after start, read by the shared collection as one producer (a reader takes its producers at construction). */
class AddedProducers implements MetricProducer {
  readonly producers = new Set<ExtraMetrics>()
  private readonly resource: Resource

  constructor(resource: Resource) {
    this.resource = resource
  }

  async collect(options?: MetricCollectOptions): Promise<CollectionResult> {
    const results = await Promise.all([...this.producers].map((producer) => producer.collect(options)))
    return {
      resourceMetrics: {
        resource: this.resource,
        scopeMetrics: results.flatMap((result) => result.resourceMetrics.scopeMetrics),
      },
      errors: results.flatMap((result) => result.errors),
    }
  }
}

/**
 * The service's one OpenTelemetry `MeterProvider`: every instrument of the service lives on it, and
 * every reader (Prometheus text for `/metrics`, OTLP push) reads the same instruments. Closing the
 * layer shuts the provider down, which lets push readers export one last time.
 */
export class ServiceMeter extends Context.Service<
  ServiceMeter,
  {
    readonly meterProvider: MeterProviderApi
    /** service.name, service.version, service.instance.id and the extra attributes. */
    readonly resource: Resource
    /** Every instrument of the provider, cumulative, for readers made after the provider. */
    readonly producer: MetricProducer
    /**
     * Binds a reader made after the provider (an OTLP exporter started from the config) to `producer`:
     * it reads every instrument, cumulative, with this resource. Closing the scope shuts the reader
     * down, after its last export. A reader can be attached once.
     */
    readonly attachReader: (reader: IMetricReader) => Effect.Effect<void, never, Scope.Scope>
    /**
     * Adds metrics made outside the SDK's instruments (`GpuInfoMetric`): `/metrics` and the attached
     * readers read them after the instruments until the scope closes.
     */
    readonly addProducer: (producer: ExtraMetrics) => Effect.Effect<void, never, Scope.Scope>
    /** Writes the Prometheus text exposition of every instrument, then of the extra metrics, to `response`. */
    readonly servePrometheus: (request: IncomingMessage, response: ServerResponse) => void
  }
>()("gpu-serials/metrics/ServiceMeter") {
  static readonly layer = (options: ServiceMeterOptions): Layer.Layer<ServiceMeter> =>
    Layer.effect(
      ServiceMeter,
      Effect.gen(function* () {
        const shutdownTimeout = Duration.fromInputUnsafe(options.shutdownTimeout ?? Duration.seconds(5))
        const resource = defaultResource().merge(
          resourceFromAttributes({
            ...options.resourceAttributes,
            [ATTR_SERVICE_NAME]: serviceName,
            [ATTR_SERVICE_VERSION]: options.serviceVersion,
            [ATTR_SERVICE_INSTANCE_ID]: options.serviceInstanceId ?? crypto.randomUUID(),
          }),
        )
        const added = new AddedProducers(resource)
        const prometheus = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true })
        const serializer = new PrometheusSerializer("", false, undefined, false, true)
        const sharedCollection = new SharedCollection({ metricProducers: [added] })
        const meterProvider = new MeterProvider({
          resource,
          readers: [prometheus, sharedCollection, ...(options.readers ?? [])],
        })
        yield* Effect.addFinalizer(() => shutDown("metrics", meterProvider, shutdownTimeout))

        const producer: MetricProducer = { collect: (collectOptions) => sharedCollection.collect(collectOptions) }

        // The reader's owner (an exporter) runs under the service's shutdown deadline, if there is one.
        const attachReader = (reader: IMetricReader): Effect.Effect<void, never, Scope.Scope> =>
          Effect.flatMap(Effect.serviceOption(ShutdownDeadline), (deadline) =>
            Effect.acquireRelease(
              Effect.sync(() => reader.setMetricProducer(producer)),
              () =>
                closingBudget(deadline, shutdownTimeout).pipe(
                  Effect.flatMap((budget) => shutDown("attached metric reader", reader, budget)),
                ),
            ),
          )

        /**
         * The text of one collection, in buffers: the SDK's instruments, then each extra producer's pieces,
         * the event loop let go between pieces so `/healthz` answers while a large fleet is written.
         * Scrapes that arrive while one is made share it: however many there are, one is made at a time.
         */
        let making: Promise<ReadonlyArray<Buffer>> | undefined
        const make = async (): Promise<ReadonlyArray<Buffer>> => {
          const { resourceMetrics } = await prometheus.collect()
          const parts = [Buffer.from(serializer.serialize(resourceMetrics))]
          for (const extra of [...added.producers]) {
            for (const piece of extra.prometheusText()) {
              parts.push(Buffer.from(piece))
              await new Promise((resolve) => setImmediate(resolve))
            }
          }
          return parts
        }
        const exposition = (): Promise<ReadonlyArray<Buffer>> => {
          if (making === undefined) {
            making = make().finally(() => {
              making = undefined
            })
          }
          return making
        }

        const addProducer = (extra: ExtraMetrics): Effect.Effect<void, never, Scope.Scope> =>
          Effect.acquireRelease(
            Effect.sync(() => added.producers.add(extra)),
            () => Effect.sync(() => added.producers.delete(extra)),
          ).pipe(Effect.asVoid)

        return ServiceMeter.of({
          meterProvider,
          resource,
          producer,
          attachReader,
          addProducer,
          servePrometheus: (_request, response) => {
            exposition().then(
              (parts) => endMetrics(response, 200, parts),
              (error: unknown) =>
                endMetrics(response, 500, [Buffer.from(`# failed to collect metrics: ${String(error)}\n`)]),
            )
          },
        })
      }),
    )
}

/** Writes a `/metrics` answer in parts (no copy of a large text), unless it was answered meanwhile (the health server's deadline). */
const endMetrics = (response: ServerResponse, status: number, parts: ReadonlyArray<Buffer>): void => {
  if (response.headersSent || response.writableEnded) return
  response.writeHead(status, { "content-type": "text/plain; version=0.0.4; charset=utf-8" })
  for (const part of parts) if (part.length > 0) response.write(part)
  response.end()
}

/** A provider or a reader: both export what they hold when shut down. */
interface ShutsDown {
  readonly shutdown: (options: { readonly timeoutMillis: number }) => Promise<void>
}

const shutDown = (what: string, target: ShutsDown, timeout: Duration.Duration): Effect.Effect<void> =>
  Effect.tryPromise(() => target.shutdown({ timeoutMillis: Duration.toMillis(timeout) })).pipe(
    Effect.interruptible,
    Effect.timeoutOption(timeout),
    Effect.catch((error) =>
      Effect.logWarning(`${what} did not shut down cleanly`).pipe(Effect.annotateLogs({ reason: error.message })),
    ),
    Effect.asVoid,
  )
