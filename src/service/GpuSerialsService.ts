import { hostname } from "node:os"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import { ComponentStartError } from "../component/ComponentStartError.ts"
import { ShutdownDeadline } from "../component/ShutdownDeadline.ts"
import type { ComponentConfig, ServiceConfig } from "../config/ServiceConfig.ts"
import type { InventoryEvent } from "../domain/InventoryEvent.ts"
import type { NodeObservation } from "../domain/NodeObservation.ts"
import { HealthServer } from "../health/HealthServer.ts"
import { ReadinessChecks } from "../health/ReadinessChecks.ts"
import * as ServiceInstruments from "../metrics/ServiceInstruments.ts"
import { ServiceMetrics } from "../metrics/ServiceMetrics.ts"
import { EventConsumer } from "../pipeline/EventConsumer.ts"
import { InventoryFeed } from "../pipeline/InventoryFeed.ts"
import { InventoryStores } from "../pipeline/InventoryStore.ts"
import type { Elector, LeaseSettings } from "../pipeline/Leadership.ts"
import type { Receiver } from "../pipeline/Receiver.ts"
import { type BuiltinReceiver, builtinComponents, type Distribution } from "./BuiltinComponents.ts"
import type { ConfiguredExporter } from "./ComponentRegistry.ts"
import { ExporterFanout } from "./ExporterFanout.ts"
import { storeHost } from "./InventoryStoreHost.ts"
import * as TermReadiness from "./TermReadiness.ts"

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
  /** The receiver, processor and store types the pipeline's config names; the built-in ones unless given. */
  readonly components?: Pick<Distribution, "receivers" | "processors" | "stores">
}

const readinessNames = ["informers", "readings", "inventory", "exporters"] as const
const exporterStatsInterval = "5 seconds"

/**
 * The service: the pipeline's receiver feeds node observations to its processor, whose events fan out to
 * the exporters, each built by its factory from the pipeline's config; a health server answers /healthz,
 * /readyz and /metrics. Runs until interrupted, then shuts down in order within `shutdownTimeout`: the
 * receiver stops taking pods and abandons those in flight, the inventory takes the observations already
 * made, the node labels still queued are written, the exporters write what they hold in the time left
 * (each one logs what it could not write), the server closes.
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
        ServiceInstruments.layerWithMeter(
          {
            serviceVersion: options.serviceVersion,
            resourceAttributes: { "k8s.cluster.name": config.clusterName },
          },
          { gpuInfo: config.telemetry.gpuInfoMetric },
        ),
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

  const components = options.components ?? builtinComponents
  const factoryOf = <F extends { readonly type: string }>(
    kind: string,
    factories: ReadonlyArray<F>,
    component: ComponentConfig,
  ): Effect.Effect<F, ComponentStartError> => {
    const factory = factories.find((candidate) => candidate.type === component.type)
    return factory === undefined
      ? Effect.fail(
          new ComponentStartError({ component: component.id, message: `no ${kind} of type ${component.type}` }),
        )
      : Effect.succeed(factory)
  }
  const [processorConfig] = config.processors
  const [receiverConfig] = config.receivers
  if (processorConfig === undefined || config.processors.length > 1) {
    return yield* new ComponentStartError({
      component: "service",
      message: `the pipeline needs exactly one processor, got ${config.processors.length}`,
    })
  }
  if (receiverConfig === undefined || config.receivers.length > 1) {
    return yield* new ComponentStartError({
      component: "service",
      message: `the pipeline needs exactly one receiver, got ${config.receivers.length}`,
    })
  }
  const tapEvents = options.tapEvents
  const consumer = EventConsumer.of({
    export:
      tapEvents === undefined ? fanout.export : (events) => Effect.andThen(fanout.export(events), tapEvents(events)),
  })
  const stores = storeHost({
    stores: components.stores,
    exporters: options.exporters,
    receivers: config.receivers,
    clusterName: config.clusterName,
  })
  const processorFactory = yield* factoryOf("processor", components.processors, processorConfig)
  const receiverFactory = yield* factoryOf("receiver", components.receivers, receiverConfig)
  const election = config.leaderElection
  const elector: Elector | undefined = election.enabled
    ? yield* electorOf(
        receiverFactory,
        receiverConfig,
        {
          ...election,
          identity: election.identity.trim() === "" ? hostname() : election.identity,
        },
        settings,
      )
    : undefined
  const termChecks = yield* TermReadiness.make(elector === undefined ? "starting" : "following")

  const shuttingDown = yield* Ref.make(false)
  const beginShutdown = Effect.gen(function* () {
    if (yield* Ref.getAndSet(shuttingDown, true)) return
    yield* deadline.begin
    yield* Effect.logInfo("gpu-serials shutting down").pipe(
      Effect.annotateLogs({ shutdownTimeout: Duration.format(deadline.budget) }),
    )
  })
  yield* Effect.addFinalizer(() =>
    Effect.gen(function* () {
      yield* beginShutdown
      // The exporters' own closing then finds their records written, or logs what it drops.
      yield* fanout.flush(yield* deadline.forFlushing)
    }),
  )

  /**
   * One term: the processor loads its store, the receiver starts; returns the delivery of observations.
   * Closing the term's scope stops the receiver (its reads are abandoned) while the observations already
   * made reach the processor, ends the feed so the receiver's node labeller writes the last changes,
   * then the processor flushes its store.
   */
  const startTerm = Effect.fnUntraced(function* () {
    yield* termChecks.lead
    // The term's processor publishes its changes here; its receiver mirrors them (the node labeller).
    const feed = yield* InventoryFeed.make
    const processor = yield* processorFactory
      .create(processorConfig.config, { id: processorConfig.id, ...settings })
      .pipe(
        Effect.provideService(EventConsumer, consumer),
        Effect.provideService(InventoryStores, stores),
        Effect.provideService(InventoryFeed, feed),
      )
    yield* termChecks.add("inventory", processor.health)

    const observe = (observation: NodeObservation): Effect.Effect<void> =>
      options.tap === undefined
        ? processor.observe(observation)
        : Effect.andThen(options.tap(observation), processor.observe(observation))

    // The receiver lives in its own scope, closed first; the observations it made still reach the processor.
    const receiverScope = yield* Scope.make()
    const receiver: Receiver = yield* receiverFactory
      .create(receiverConfig.config, { id: receiverConfig.id, ...settings })
      .pipe(
        Effect.provideService(EventConsumer, consumer),
        Effect.provideService(InventoryStores, stores),
        Effect.provideService(InventoryFeed, feed),
        Scope.provide(receiverScope),
        Effect.onError(() => Effect.andThen(feed.end, Scope.close(receiverScope, Exit.void))),
      )
    yield* termChecks.add("informers", receiver.health)
    yield* termChecks.add("readings", receiver.readings)
    const deliver = Queue.take(receiver.observations).pipe(Effect.flatMap(observe), Effect.forever)
    yield* Effect.addFinalizer((exit) =>
      Effect.gen(function* () {
        if (Exit.hasInterrupts(exit)) yield* beginShutdown
        // The receiver's last observations reach the processor while it closes; the feed ends after them,
        // so the receiver's node labeller, which closes last, writes the inventory's last changes.
        const deliverRest = deliver.pipe(
          Effect.catchIf(Cause.isDone, () => Effect.void),
          Effect.interruptible,
          Effect.timeoutOption(yield* deadline.forFlushing),
          Effect.ensuring(feed.end),
        )
        yield* Effect.all([Scope.close(receiverScope, Exit.void), deliverRest], {
          concurrency: "unbounded",
          discard: true,
        })
      }),
    )
    return deliver.pipe(Effect.catchIf(Cause.isDone, () => Effect.void))
  })

  if (options.onListening !== undefined) yield* options.onListening(server.port)
  yield* Effect.logInfo("gpu-serials running").pipe(
    Effect.annotateLogs({
      cluster: config.clusterName,
      exporters: options.exporters.map((exporter) => exporter.id).join(","),
      port: server.port,
      ...(elector === undefined ? {} : { leaderElection: elector.identity }),
    }),
  )

  if (elector === undefined) {
    // Without leader election this replica is the only one: one term for the whole run.
    yield* metrics.leaderChanged(true)
    return yield* Effect.scoped(Effect.flatten(startTerm()))
  }
  yield* metrics.leaderChanged(false)
  // Terms follow each other until the receiver stops or the service is interrupted.
  while (true) {
    const receiverStopped = yield* Effect.scoped(
      Effect.gen(function* () {
        // Registered first, so it runs last: the gauge drops once the term's work has stopped and the lease is released.
        yield* Effect.addFinalizer(() => Effect.andThen(metrics.leaderChanged(false), termChecks.follow))
        const term = yield* elector.lead
        yield* metrics.leaderChanged(true)
        const deliver = yield* startTerm()
        return yield* Effect.raceFirst(Effect.as(deliver, true), Effect.as(term.lost, false))
      }),
    )
    if (receiverStopped) return
  }
})

/** The elector of the pipeline's receiver type; a type that offers none cannot run with leader election. */
const electorOf = (
  factory: BuiltinReceiver,
  receiver: ComponentConfig,
  lease: LeaseSettings,
  settings: { readonly clusterName: string; readonly serviceVersion: string },
): Effect.Effect<Elector, ComponentStartError, Scope.Scope> =>
  factory.elector === undefined
    ? Effect.fail(
        new ComponentStartError({
          component: receiver.id,
          message: `receiver ${receiver.id} offers no leader election; set LEADER_ELECTION=false`,
        }),
      )
    : factory.elector(receiver.config, lease, { id: receiver.id, ...settings })
