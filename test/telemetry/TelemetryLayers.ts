import { Layer } from "effect"
import { HealthServer, type HealthServerOptions } from "../../src/telemetry/HealthServer.ts"
import * as OtelServiceMetrics from "../../src/telemetry/OtelServiceMetrics.ts"
import { ReadinessChecks, type ReadinessOptions } from "../../src/telemetry/ReadinessChecks.ts"
import type { ServiceMeterOptions } from "../../src/telemetry/ServiceMeter.ts"

export const meterOptions: ServiceMeterOptions = { serviceVersion: "1.2.3", serviceInstanceId: "replica-a" }

/** The service's telemetry as `run` wires it: metrics, readiness checks and the server on a free port. */
export const telemetryLayer = (
  options: {
    readonly readiness?: ReadinessOptions
    readonly server?: Partial<HealthServerOptions>
    readonly meter?: ServiceMeterOptions
    readonly metrics?: OtelServiceMetrics.ServiceMetricsOptions
  } = {},
) =>
  HealthServer.layer({ port: 0, host: "127.0.0.1", ...options.server }).pipe(
    Layer.provideMerge(ReadinessChecks.layer(options.readiness)),
    Layer.provideMerge(OtelServiceMetrics.layerWithMeter(options.meter ?? meterOptions, options.metrics)),
  )
