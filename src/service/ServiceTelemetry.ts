import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import { ShutdownDeadline } from "../component/ShutdownDeadline.ts"
import type { ServiceConfig } from "../config/ServiceConfig.ts"
import type { Fleet } from "../fleet/Fleet.ts"
import { HealthServer } from "../health/HealthServer.ts"
import { ReadinessChecks } from "../health/ReadinessChecks.ts"
import * as ServiceInstruments from "../metrics/ServiceInstruments.ts"

/** The checks `/readyz` answers with, in order: the receiver's two, the processor's, the exporters'. */
const readinessNames = ["informers", "readings", "inventory", "exporters"] as const

/**
 * What the service's own observability is made of: the shutdown deadline every component closes within,
 * the readiness checks, the metric instruments, and the health server answering /healthz, /readyz and
 * /metrics on the configured address and port, and the fleet page and API when given the fleet.
 */
export const serviceTelemetry = (config: ServiceConfig, serviceVersion: string, fleet?: Fleet["Service"]) => {
  const address = config.telemetry.serverAddress
  return HealthServer.layer({
    port: config.telemetry.serverPort,
    ...(address === "" ? {} : { host: address }),
    ...(fleet === undefined ? {} : { fleet }),
  }).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        ShutdownDeadline.layer(Duration.millis(config.shutdownTimeoutMs)),
        ReadinessChecks.layer({ expected: readinessNames }),
        ServiceInstruments.layerWithMeter(
          { serviceVersion, resourceAttributes: { "k8s.cluster.name": config.clusterName } },
          { gpuInfo: config.telemetry.gpuInfoMetric },
        ),
      ),
    ),
  )
}
