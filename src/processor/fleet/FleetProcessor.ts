import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { ComponentFactory, Health } from "../../component/Component.ts"
import { type ComponentSettings, configuredBy } from "../../config/ComponentSettings.ts"
import type { ClusterObservation } from "../../domain/ClusterObservation.ts"
import type { GpuRecord } from "../../domain/GpuRecord.ts"
import type { InventoryEventKind } from "../../domain/InventoryEventKind.ts"
import { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import { EventConsumer } from "../../pipeline/EventConsumer.ts"
import type { Processor } from "../../pipeline/Processor.ts"
import { type ClusterLiveness, heard, staleClusters, startLiveness } from "./ClusterLiveness.ts"
import { type FleetConfig, fleetSettings } from "./FleetConfig.ts"
import { emptyHubFleet, type HubFleet, restoredHubFleet, tick, transition } from "./HubFleet.ts"

/** Notes, for each cluster with records in the batch, its latest record's time: when it last spoke in it. */
const hearRecords = (liveness: ClusterLiveness, records: ReadonlyArray<GpuRecord>): void => {
  const latest = new Map<string, number>()
  for (const record of records) {
    const time = Date.parse(record.time)
    if (time > (latest.get(record.cluster) ?? Number.NEGATIVE_INFINITY)) latest.set(record.cluster, time)
  }
  for (const [cluster, time] of latest) heard(liveness, cluster, new Date(time))
}

/**
 * The `fleet` processor of a hub: applies each batch of the clusters' records to the fleet across clusters
 * (`HubFleet.ts`), hands the records that make to the exporters (waiting until each has room: the
 * stream keeps what the hub has not acknowledged), then acknowledges the batch once with all its changes
 * for the hub's store. Removals held past the window are forwarded at the next observation
 * (every live cluster sends a heartbeat each `HEARTBEAT_INTERVAL`), so their release is written with it.
 * A cluster not heard of for `staleAfter` is named in readiness check `fleet` and in
 * `gpu_serials_hub_cluster_stale`.
 */
export const make = Effect.fnUntraced(function* (config: FleetConfig) {
  const consumer = yield* EventConsumer
  const metrics = yield* ServiceMetrics
  const rules = { windowMs: config.crossClusterWindowMs }
  let fleet: HubFleet = emptyHubFleet()
  let clusters: ReadonlyArray<string> = []
  let liveness: ClusterLiveness = startLiveness(new Date(yield* Clock.currentTimeMillis))
  let restored = false
  /**
   * A batch stopped between its transition and its acknowledgement (the service's shutdown ends a wait
   * for the exporters): the fleet in memory is ahead of the store, so no later batch is applied or
   * acknowledged; the stream delivers them again after a restart, from the store's state.
   */
  let halted = false

  const staleAt = (now: Date): ReadonlyArray<string> => staleClusters(liveness, clusters, now, config.staleAfterMs)
  yield* metrics.observeStaleClusters(() => {
    const stale = new Set(staleAt(new Date()))
    return new Map(clusters.map((cluster) => [cluster, stale.has(cluster)]))
  })

  const handOver = Effect.fnUntraced(function* (records: ReadonlyArray<GpuRecord>) {
    if (records.length === 0) return
    yield* consumer.export(records.map((record) => ({ record, origin: {} })))
    const counts = new Map<InventoryEventKind, number>()
    for (const record of records) counts.set(record.event, (counts.get(record.event) ?? 0) + 1)
    for (const [kind, count] of counts) yield* metrics.inventoryEvents(kind, count)
  })

  const apply = Effect.fnUntraced(function* (observation: ClusterObservation) {
    const now = new Date(yield* Clock.currentTimeMillis)
    if (observation._tag === "FleetRestored") {
      fleet = restoredHubFleet(observation.snapshot)
      clusters = observation.clusters
      liveness = startLiveness(now)
      restored = true
      return
    }
    const due = tick(fleet, now, rules)
    const applied = transition(fleet, observation.records, rules)
    const records = due.records.length === 0 ? applied.records : [...due.records, ...applied.records]
    const changes = due.changes.length === 0 ? applied.changes : [...due.changes, ...applied.changes]
    hearRecords(liveness, observation.records)
    for (const heartbeat of observation.heartbeats) heard(liveness, heartbeat.cluster, heartbeat.sentAt)
    yield* handOver(records)
    yield* observation.acknowledge(changes)
  })

  const observe = Effect.fn("FleetProcessor.observe")(function* (observation: ClusterObservation) {
    if (halted) return
    yield* apply(observation).pipe(
      Effect.onInterrupt(() =>
        Effect.sync(() => {
          halted = true
        }),
      ),
    )
  })

  const health: Effect.Effect<Health> = Clock.currentTimeMillis.pipe(
    Effect.map((millis): Health => {
      if (!restored) return { healthy: false, message: "hub store not read yet" }
      const stale = staleAt(new Date(millis))
      return stale.length === 0
        ? { healthy: true }
        : {
            healthy: false,
            message: `clusters not heard of for ${Math.round(config.staleAfterMs / 1000)}s: ${stale.join(", ")}`,
          }
    }),
  )
  return { observe, health } satisfies Processor<ClusterObservation>
})

/** The `fleet` processor factory: a hub's processor, taking the `nats` receiver's cluster observations. */
export const factory: ComponentFactory<
  "processor",
  FleetConfig,
  Processor<ClusterObservation>,
  ServiceMetrics | EventConsumer
> & { readonly settings: ComponentSettings<FleetConfig>; readonly observes: "cluster" } = {
  kind: "processor",
  type: "fleet",
  observes: "cluster",
  ...configuredBy(fleetSettings),
  create: (config) => make(config),
}
