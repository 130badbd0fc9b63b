import { Layer } from "effect"
import { HealthServer, type HealthServerOptions } from "../../src/health/HealthServer.ts"
import { ReadinessChecks, type ReadinessOptions } from "../../src/health/ReadinessChecks.ts"
import * as ServiceInstruments from "../../src/metrics/ServiceInstruments.ts"
import type { ServiceMeterOptions } from "../../src/metrics/ServiceMeter.ts"

export const meterOptions: ServiceMeterOptions = { serviceVersion: "1.2.3", serviceInstanceId: "replica-a" }

/** The service's telemetry as `run` wires it: metrics, readiness checks and the server on a free port. */
export const telemetryLayer = (
  options: {
    readonly readiness?: ReadinessOptions
    readonly server?: Partial<HealthServerOptions>
    readonly meter?: ServiceMeterOptions
    readonly metrics?: ServiceInstruments.ServiceMetricsOptions
  } = {},
) =>
  HealthServer.layer({ port: 0, host: "127.0.0.1", ...options.server }).pipe(
    Layer.provideMerge(ReadinessChecks.layer(options.readiness)),
    Layer.provideMerge(ServiceInstruments.layerWithMeter(options.meter ?? meterOptions, options.metrics)),
  )
