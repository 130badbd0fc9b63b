import { resourceFromAttributes } from "@opentelemetry/resources"
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type Configured, configuredBy } from "../../config/ComponentSettings.ts"
import { ServiceMeter } from "../../metrics/ServiceMeter.ts"
import type { ExporterFactory } from "../../pipeline/Exporter.ts"
import * as QueuedExporter from "../exporterhelper/QueuedExporter.ts"
import { type OtlpExporterConfig, otlpSettings } from "./OtlpConfig.ts"
import { otlpTarget, signalUrl } from "./OtlpEndpoint.ts"
import * as OtlpLogsSink from "./OtlpLogsSink.ts"
import * as OtlpMetricsPush from "./OtlpMetricsPush.ts"

const shutdownTimeout = Duration.seconds(5)

/**
 * The `otlp` exporter factory: one OTLP log record per GPU event (the node as Resource) through the
 * common bounded, retried queue, and, every `metricsInterval`, the service's metrics and the GPU fleet
 * gauges pushed to the same receiver. The queue uses the section's queue settings; a write's deadline
 * covers at least one request's timeout.
 */
export const factory: ExporterFactory<OtlpExporterConfig> & Configured<OtlpExporterConfig> = {
  kind: "exporter",
  type: "otlp",
  ...configuredBy(otlpSettings),
  create: (config, settings) =>
    Effect.gen(function* () {
      const serviceMeter = yield* Effect.serviceOption(ServiceMeter)
      const sharedInstanceId = Option.flatMap(serviceMeter, (meter) =>
        Option.fromNullishOr(meter.resource.attributes[ATTR_SERVICE_INSTANCE_ID]),
      )
      const service = {
        serviceName: config.serviceName,
        serviceVersion: settings.serviceVersion,
        serviceInstanceId: Option.isSome(sharedInstanceId) ? String(sharedInstanceId.value) : crypto.randomUUID(),
        resourceAttributes: config.resourceAttributes,
      }
      const timeout = Duration.millis(config.timeoutMs)
      const logs = otlpTarget(config.logsEndpoint ?? signalUrl(config.endpoint, "v1/logs"), config.headers)
      const sink = OtlpLogsSink.make({
        url: logs.url,
        headers: logs.headers,
        protocol: config.protocol,
        compression: config.compression,
        timeout,
        service,
        entityEvents: config.entityEvents,
      })
      const exporter = yield* QueuedExporter.make({
        id: settings.id,
        sink,
        settings: { ...config.queue, writeTimeout: Duration.max(config.queue.writeTimeout, timeout) },
        shutdownTimeout,
      })
      if (config.metricsIntervalMs === 0) return exporter
      const metrics = otlpTarget(signalUrl(config.endpoint, "v1/metrics"), config.headers)
      const fleet = yield* OtlpMetricsPush.start({
        url: metrics.url,
        headers: metrics.headers,
        protocol: config.protocol,
        compression: config.compression,
        timeoutMs: config.timeoutMs,
        intervalMs: config.metricsIntervalMs,
        resource: resourceFromAttributes({
          ...config.resourceAttributes,
          [ATTR_SERVICE_NAME]: service.serviceName,
          [ATTR_SERVICE_VERSION]: service.serviceVersion,
          [ATTR_SERVICE_INSTANCE_ID]: service.serviceInstanceId,
          "k8s.cluster.name": settings.clusterName,
        }),
        shutdownTimeout,
      })
      return { ...exporter, export: (events) => Effect.andThen(fleet.record(events), exporter.export(events)) }
    }),
}
