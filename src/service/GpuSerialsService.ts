import { Cause, Duration, Effect, Exit, Layer, Queue, Schedule, Scope } from "effect"
import type { ConfiguredExporter } from "../component/ComponentRegistry.ts"
import { ShutdownDeadline } from "../component/ShutdownDeadline.ts"
import type { ServiceConfig } from "../config/ServiceConfig.ts"
import type { InventoryEvent } from "../domain/InventoryEvent.ts"
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
  /** Sees every batch of inventory events as it is handed to the exporters (the demo's progress). */
  readonly tapEvents?: (events: ReadonlyArray<InventoryEvent>) => Effect.Effect<void>
  /** Called once the health server listens, with its port. */
  readonly onListening?: (port: number) => Effect.Effect<void>
  readonly receiverTuning?: KubeExecTuning
}

const readinessNames = ["informers", "readings", "inventory", "exporters"] as const
const exporterStatsInterval = "5 seconds"

/**
 * The service: the `kube_exec` receiver feeds node observations to the `inventory` processor, whose
 * events fan out to the exporters; a health server answers /healthz, /readyz and /metrics. Runs until
 * interrupted, then shuts down in order within `shutdownTimeout`: the receiver stops taking pods and
 * abandons those in flight, the inventory takes the observations already made, the exporters write what
 * they hold in the time left (each one logs what it could not write), the server closes.
 */
export const runGpuSerialsService = (options: GpuSerialsServiceOptions) => {
  const { config } = options
  const address = config.telemetry.serverAddress
  const telemetry = HealthServer.layer({
    port: config.telemetry.serverPort,
    ...(address === "" ? {} : { host: address }),
  }).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        ShutdownDeadline.layer(Duration.millis(config.shutdownTimeoutMs)),
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
  const deadline = yield* ShutdownDeadline
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
  const tapEvents = options.tapEvents
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
    sink:
      tapEvents === undefined ? fanout.export : (events) => Effect.andThen(fanout.export(events), tapEvents(events)),
    store,
  })
  yield* readiness.register("inventory", inventory.health)

  const observe = (observation: NodeObservation): Effect.Effect<void> =>
    options.tap === undefined
      ? inventory.observe(observation)
      : Effect.andThen(options.tap(observation), inventory.observe(observation))

  // The receiver lives in its own scope, closed first at shutdown; the observations it made still reach the inventory.
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
    Effect.gen(function* () {
      yield* deadline.begin
      yield* Effect.logInfo("gpu-serials shutting down").pipe(
        Effect.annotateLogs({ shutdownTimeout: Duration.format(deadline.budget) }),
      )
      yield* Scope.close(receiverScope, Exit.void)
      yield* deliver.pipe(
        Effect.catchIf(Cause.isDone, () => Effect.void),
        Effect.interruptible,
        Effect.timeoutOption(yield* deadline.forFlushing),
      )
      // The exporters' own closing then finds their records written, or logs what it drops.
      yield* fanout.flush(yield* deadline.forFlushing)
    }),
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
