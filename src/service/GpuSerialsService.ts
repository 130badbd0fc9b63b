import { hostname } from "node:os"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { CreateSettings } from "../component/Component.ts"
import { ComponentStartError } from "../component/ComponentStartError.ts"
import type { ComponentConfig, ServiceConfig } from "../config/ServiceConfig.ts"
import type { PostgresExporterConfig } from "../exporter/postgres/PostgresConfig.ts"
import { Fleet, type FleetRole } from "../fleet/Fleet.ts"
import { HealthServer } from "../health/HealthServer.ts"
import { ReadinessChecks } from "../health/ReadinessChecks.ts"
import { ServiceMetrics } from "../metrics/ServiceMetrics.ts"
import { EventConsumer } from "../pipeline/EventConsumer.ts"
import type { Elector } from "../pipeline/Leadership.ts"
import { type ObservationKind, observationKindOf } from "../pipeline/ObservationKind.ts"
import { builtinComponents } from "./BuiltinComponents.ts"
import { ComponentRegistry, type ConfiguredExporter } from "./ComponentRegistry.ts"
import { ExporterFanout } from "./ExporterFanout.ts"
import { followFromStore } from "./FleetFollower.ts"
import { storeHost } from "./InventoryStoreHost.ts"
import * as PipelineTerm from "./PipelineTerm.ts"
import * as ServiceShutdown from "./ServiceShutdown.ts"
import { serviceTelemetry } from "./ServiceTelemetry.ts"
import * as StartupHeapGrowth from "./StartupHeapGrowth.ts"
import * as TermReadiness from "./TermReadiness.ts"

export interface GpuSerialsServiceOptions {
  readonly config: ServiceConfig
  readonly exporters: ReadonlyArray<ConfiguredExporter>
  readonly serviceVersion: string
  /** The factories of the receiver, processor and store types the config names; the built-in ones unless given. */
  readonly registry?: ComponentRegistry["Service"]
}

const exporterStatsInterval = "5 seconds"

/**
 * The service: the pipeline's receiver feeds node observations to its processor, whose events fan out to
 * the exporters, each built by its factory from the pipeline's config; a health server answers /healthz,
 * /readyz and /metrics. Runs until interrupted, then shuts down in order within `shutdownTimeout`: the
 * receiver stops taking pods and abandons those in flight, the inventory takes the observations already
 * made, the node labels still queued are written, the exporters write what they hold in the time left
 * (each one logs what it could not write), the server closes.
 */
export const runGpuSerialsService = (options: GpuSerialsServiceOptions) =>
  Effect.suspend(() => {
    const fleet = fleetOf(options)
    return Effect.scoped(run(options, fleet)).pipe(
      Effect.provide(serviceTelemetry(options.config, options.serviceVersion, fleet)),
    )
  })

/**
 * The fleet page and API's state when `FLEET_PAGE` is on: a hub's (its receiver takes clusters' records)
 * spans every cluster.
 */
const fleetOf = (options: GpuSerialsServiceOptions): Fleet["Service"] | undefined => {
  const { config } = options
  if (!config.fleet.page) return undefined
  const registry = options.registry ?? ComponentRegistry.make(builtinComponents)
  const receiverType = config.receivers[0]?.type
  const receiver = receiverType === undefined ? undefined : registry.receiver(receiverType)
  return Fleet.make({
    cluster: config.clusterName,
    eventCapacity: config.fleet.events,
    ...(config.fleet.token === "" ? {} : { token: config.fleet.token }),
    ...(receiver !== undefined && observationKindOf(receiver) === "cluster" ? { acrossClusters: true } : {}),
  })
}

/**
 * With a `postgres` exporter in the pipeline, a GPU's history on the fleet API comes from its history
 * table; the reader's module loads only then. A pool that cannot be made leaves the process's own history.
 */
const durableHistory = (fleet: Fleet["Service"], exporters: ReadonlyArray<ConfiguredExporter>, cluster: string) => {
  // A hub's table holds the rows of every cluster, written under each GPU's own cluster.
  const historyCluster = fleet.options.acrossClusters === true ? undefined : cluster
  const postgres = exporters.find((exporter) => exporter.type === "postgres")
  if (postgres === undefined) return Effect.void
  return Effect.promise(() => import("../exporter/postgres/PostgresHistory.ts")).pipe(
    Effect.flatMap(({ historyReader }) => historyReader(postgres.config as PostgresExporterConfig, historyCluster)),
    Effect.match({
      onFailure: (failure) =>
        Effect.logWarning("fleet API answers history from this process").pipe(
          Effect.annotateLogs({ exporter: postgres.id, reason: failure.message }),
        ),
      onSuccess: (reader) => Effect.sync(() => fleet.setDurableHistory(reader)),
    }),
    Effect.flatten,
  )
}

/** The inventory processor's `store` setting; `memory` for a processor that names none. */
const storeNameOf = (config: ServiceConfig): string => {
  const store = (config.processors[0]?.config as { readonly store?: unknown } | undefined)?.store
  return typeof store === "string" ? store : "memory"
}

/** Tells the fleet whether this replica follows, with the lease's holder as this replica last read it. */
const following = (fleet: Fleet["Service"] | undefined, elector: Elector) =>
  fleet === undefined
    ? Effect.void
    : (elector.holder ?? Effect.succeed(undefined)).pipe(
        Effect.flatMap((holder) =>
          Effect.sync(() => {
            fleet.view.clearInventory()
            fleet.setRole(followerRole(holder, elector, "none"))
          }),
        ),
      )

const followerRole = (holder: string | undefined, elector: Elector, source: FleetRole["source"]): FleetRole => ({
  role: "follower",
  source,
  ...(holder === undefined || holder === elector.identity ? {} : { leader: holder }),
})

/** Keeps a follower's fleet status naming the lease's current holder. */
const followLeader = (fleet: Fleet["Service"] | undefined, elector: Elector) =>
  fleet === undefined || elector.holder === undefined
    ? Effect.void
    : elector.holder.pipe(
        Effect.flatMap((holder) =>
          Effect.sync(() => {
            const role = fleet.role()
            if (role.role === "follower") fleet.setRole(followerRole(holder, elector, role.source))
          }),
        ),
        Effect.repeat(Schedule.spaced("2 seconds")),
        Effect.asVoid,
        Effect.forkScoped,
      )

/**
 * The exporters and their fan-out, for the service's lifetime: readiness check `exporters`, their
 * counters on the metrics, and at shutdown a last flush in the time left, so their own closing finds
 * their records written or logs what it drops. A hub's (`cluster` observations, from a durable stream)
 * waits for room in every exporter instead of dropping; a cluster's never waits.
 */
const startExporters = Effect.fnUntraced(function* (
  exporters: ReadonlyArray<ConfiguredExporter>,
  settings: Omit<CreateSettings, "id">,
  shutdown: ServiceShutdown.ServiceShutdown,
  kind: ObservationKind,
) {
  const metrics = yield* ServiceMetrics
  const readiness = yield* ReadinessChecks
  // Created side by side: one whose sink is slow to answer at start holds back no other.
  const created = yield* Effect.forEach(exporters, (exporter) => exporter.create(settings), {
    concurrency: "unbounded",
  })
  const fanout = yield* ExporterFanout.make(created, { waitForRoom: kind === "cluster" })
  yield* readiness.register("exporters", fanout.health)
  yield* fanout.stats.pipe(
    Effect.flatMap(metrics.exporterStats),
    Effect.repeat(Schedule.spaced(exporterStatsInterval)),
    Effect.forkScoped,
  )
  yield* Effect.addFinalizer(() => Effect.andThen(shutdown.begin, Effect.flatMap(shutdown.forFlushing, fanout.flush)))
  return fanout
})

/**
 * The pipeline's component of `kind` with its factory from the registry; the config was validated
 * against the same types (one receiver, one processor).
 */
const componentOf = <F>(
  kind: "receiver" | "processor",
  components: ReadonlyArray<ComponentConfig>,
  lookup: (type: string) => F | undefined,
): Effect.Effect<{ readonly factory: F; readonly config: ComponentConfig }, ComponentStartError> => {
  const [config] = components
  const factory = config === undefined ? undefined : lookup(config.type)
  if (config === undefined || factory === undefined) {
    return Effect.fail(
      new ComponentStartError({
        component: config?.id ?? "service",
        message: config === undefined ? `the pipeline has no ${kind}` : `no ${kind} of type ${config.type}`,
      }),
    )
  }
  return Effect.succeed({ factory, config })
}

/** The elector of the pipeline's receiver type; a type that offers none cannot run with leader election. */
const electorOf = (
  receiver: PipelineTerm.PipelineTermParts["receiver"],
  election: ServiceConfig["leaderElection"],
  settings: Omit<CreateSettings, "id">,
): Effect.Effect<Elector, ComponentStartError, Scope.Scope> => {
  const { factory, config } = receiver
  const lease = { ...election, identity: election.identity.trim() === "" ? hostname() : election.identity }
  return factory.elector === undefined
    ? Effect.fail(
        new ComponentStartError({
          component: config.id,
          message: `receiver ${config.id} offers no leader election; set LEADER_ELECTION=false`,
        }),
      )
    : factory.elector(config.config, lease, { id: config.id, ...settings })
}

const run = Effect.fnUntraced(function* (options: GpuSerialsServiceOptions, fleet: Fleet["Service"] | undefined) {
  const { config } = options
  const metrics = yield* ServiceMetrics
  const server = yield* HealthServer
  yield* StartupHeapGrowth.relaxedUntilReady(StartupHeapGrowth.v8HeapGrowth, {
    ...StartupHeapGrowth.defaultStartupHeapGrowthOptions,
    startedWith: StartupHeapGrowth.startedHeapGrowingPercent(process.execArgv),
  })
  const registry = options.registry ?? ComponentRegistry.make(builtinComponents)
  const settings = { clusterName: config.clusterName, serviceVersion: options.serviceVersion }
  const shutdown = yield* ServiceShutdown.make

  const receiver = yield* componentOf("receiver", config.receivers, registry.receiver)
  const fanout = yield* startExporters(options.exporters, settings, shutdown, observationKindOf(receiver.factory))
  if (fleet !== undefined) yield* durableHistory(fleet, options.exporters, config.clusterName)
  const processor = yield* componentOf("processor", config.processors, registry.processor)
  const elector = config.leaderElection.enabled
    ? yield* electorOf(receiver, config.leaderElection, settings)
    : undefined
  const readiness = yield* TermReadiness.make(
    elector === undefined ? "starting" : "following",
    observationKindOf(receiver.factory),
  )
  const term: PipelineTerm.PipelineTermParts = {
    receiver,
    processor,
    settings,
    consumer: EventConsumer.of({
      export:
        fleet === undefined
          ? fanout.export
          : (events) =>
              Effect.andThen(
                Effect.sync(() => fleet.view.record(events)),
                fanout.export(events),
              ),
    }),
    stores: storeHost({
      stores: registry.stores,
      exporters: options.exporters,
      receivers: config.receivers,
      clusterName: config.clusterName,
    }),
    readiness,
    shutdown,
    ...(fleet === undefined ? {} : { fleet }),
  }

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
    fleet?.setRole({ role: "single", source: "inventory" })
    return yield* Effect.scoped(Effect.flatten(PipelineTerm.start(term)))
  }
  yield* metrics.leaderChanged(false)
  yield* following(fleet, elector)
  yield* followLeader(fleet, elector)
  // Terms follow each other until the receiver stops or the service is interrupted.
  while (true) {
    const receiverStopped = yield* Effect.scoped(
      Effect.gen(function* () {
        // Registered first, so it runs last: the gauge drops once the term's work has stopped and the lease is released.
        yield* Effect.addFinalizer(() =>
          Effect.andThen(metrics.leaderChanged(false), readiness.follow).pipe(
            Effect.andThen(following(fleet, elector)),
          ),
        )
        // While it waits for the lease, the fleet API answers from the durable store the leader writes.
        const fromStore =
          fleet === undefined
            ? undefined
            : yield* Effect.forkScoped(followFromStore({ fleet, stores: term.stores, storeName: storeNameOf(config) }))
        const lease = yield* elector.lead
        if (fromStore !== undefined) yield* Fiber.interrupt(fromStore)
        yield* metrics.leaderChanged(true)
        fleet?.setRole({ role: "leader", leader: elector.identity, source: "inventory" })
        const deliver = yield* PipelineTerm.start(term)
        return yield* Effect.raceFirst(Effect.as(deliver, true), Effect.as(lease.lost, false))
      }),
    )
    if (receiverStopped) return
  }
})
