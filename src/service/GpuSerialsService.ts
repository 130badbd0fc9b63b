import { Cause, Effect, Exit, Layer, Queue, Schedule, Scope } from "effect"
import type { ConfiguredExporter } from "../component/ComponentRegistry.ts"
import type { ServiceConfig } from "../config/ServiceConfig.ts"
import type { NodeObservation } from "../domain/NodeObservation.ts"
import { ExporterFanout } from "../exporter/ExporterFanout.ts"
import * as NatsKvInventoryStore from "../exporter/nats/NatsKvInventoryStore.ts"
import { InventoryProcessor } from "../processor/inventory/InventoryProcessor.ts"
import * as MemoryInventoryStore from "../processor/inventory/MemoryInventoryStore.ts"
import { makeFactory as kubeExecFactory } from "../receiver/kube/KubeExecFactory.ts"
import { defaultTuning, type KubeExecTuning } from "../receiver/kube/KubeExecReceiver.ts"
import { HealthServer } from "../telemetry/HealthServer.ts"
import * as OtelServiceMetrics from "../telemetry/OtelServiceMetrics.ts"
import { ReadinessChecks } from "../telemetry/ReadinessChecks.ts"
import { ServiceMetrics } from "../telemetry/ServiceMetrics.ts"

export interface GpuSerialsServiceOptions {
  readonly config: ServiceConfig
  readonly exporters: ReadonlyArray<ConfiguredExporter>
  readonly serviceVersion: string
  /** Sees every observation before the inventory does (the demo's summary). */
  readonly tap?: (observation: NodeObservation) => Effect.Effect<void>
  /** Called once the health server listens, with its port. */
  readonly onListening?: (port: number) => Effect.Effect<void>
  readonly receiverTuning?: KubeExecTuning
}

const readinessNames = ["informers", "readings", "inventory", "exporters"] as const
const exporterStatsInterval = "5 seconds"

/**
 * The service: the `kube_exec` receiver feeds node observations to the `inventory` processor, whose
 * events fan out to the exporters; a health server answers /healthz, /readyz and /metrics. Runs until
 * interrupted, then shuts down in order: the receiver stops taking pods and finishes those in flight, the
 * inventory takes its last observations, the exporters write what they hold, the server closes.
 */
export const runGpuSerialsService = (options: GpuSerialsServiceOptions) => {
  const { config } = options
  const telemetry = HealthServer.layer({ port: config.telemetry.serverPort }).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        ReadinessChecks.layer({ expected: readinessNames }),
        OtelServiceMetrics.layerWithMeter({
          serviceVersion: options.serviceVersion,
          resourceAttributes: { "k8s.cluster.name": config.clusterName },
        }),
      ),
    ),
  )
  return Effect.scoped(pipeline(options)).pipe(Effect.provide(telemetry))
}

const pipeline = Effect.fnUntraced(function* (options: GpuSerialsServiceOptions) {
  const { config } = options
  const metrics = yield* ServiceMetrics
  const readiness = yield* ReadinessChecks
  const server = yield* HealthServer
  const settings = { clusterName: config.clusterName, serviceVersion: options.serviceVersion }

  const exporters = yield* Effect.forEach(options.exporters, (exporter) => exporter.create(settings))
  const fanout = yield* ExporterFanout.make(exporters)
  yield* readiness.register("exporters", fanout.health)
  yield* fanout.stats.pipe(
    Effect.flatMap(metrics.exporterStats),
    Effect.repeat(Schedule.spaced(exporterStatsInterval)),
    Effect.forkScoped,
  )

  // A nats exporter's KV bucket of current locations is the inventory's durable store; memory otherwise.
  const natsStore = NatsKvInventoryStore.storeConfigOf(options.exporters)
  const store =
    natsStore === undefined
      ? (yield* MemoryInventoryStore.make()).store
      : yield* NatsKvInventoryStore.scoped({
          config: natsStore,
          cluster: config.clusterName,
          name: `gpu-serials inventory (${config.clusterName})`,
        })
  const inventory = yield* InventoryProcessor.make({
    settings: {
      cluster: config.clusterName,
      reportIntervalMs: config.inventory.reportIntervalMs,
      removalGraceMs: config.inventory.removalGraceMs,
    },
    sink: fanout.export,
    store,
  })
  yield* readiness.register("inventory", inventory.health)

  const observe = (observation: NodeObservation): Effect.Effect<void> =>
    options.tap === undefined
      ? inventory.observe(observation)
      : Effect.andThen(options.tap(observation), inventory.observe(observation))

  // The receiver lives in its own scope, closed first at shutdown; its last observations still reach the inventory.
  const receiverScope = yield* Scope.make()
  const receiver = yield* kubeExecFactory(options.receiverTuning ?? defaultTuning)
    .create(config.kubeExec, { id: "kube_exec", ...settings })
    .pipe(
      Scope.provide(receiverScope),
      Effect.onError(() => Scope.close(receiverScope, Exit.void)),
    )
  yield* readiness.register("informers", receiver.health)
  yield* readiness.register("readings", receiver.readings)
  const deliver = Queue.take(receiver.observations).pipe(Effect.flatMap(observe), Effect.forever)
  yield* Effect.addFinalizer(() =>
    Scope.close(receiverScope, Exit.void).pipe(
      Effect.andThen(deliver),
      Effect.catchIf(Cause.isDone, () => Effect.void),
    ),
  )

  // Without leader election this replica is the only one, so it leads.
  yield* metrics.leaderChanged(true)
  if (options.onListening !== undefined) yield* options.onListening(server.port)
  yield* Effect.logInfo("gpu-serials running").pipe(
    Effect.annotateLogs({
      cluster: config.clusterName,
      exporters: options.exporters.map((exporter) => exporter.id).join(","),
      port: server.port,
    }),
  )
  return yield* deliver.pipe(Effect.catchIf(Cause.isDone, () => Effect.void))
})
