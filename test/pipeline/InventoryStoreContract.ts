import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Result } from "effect"
import type * as Scope from "effect/Scope"
import type { ComponentStartError } from "../../src/component/ComponentStartError.ts"
import type { Gpu } from "../../src/domain/Gpu.ts"
import type { GpuHealthSignals } from "../../src/domain/GpuHealth.ts"
import type { InventoryEvent } from "../../src/domain/InventoryEvent.ts"
import type { KnownGpu } from "../../src/domain/KnownGpu.ts"
import type { NodeObservation, NodeRef } from "../../src/domain/NodeObservation.ts"
import { machineIdentity } from "../../src/domain/ProviderId.ts"
import type { GpuInfoFields } from "../../src/metrics/GpuInfoLabels.ts"
import { ServiceMetrics } from "../../src/metrics/ServiceMetrics.ts"
import { EventConsumer } from "../../src/pipeline/EventConsumer.ts"
import { InventoryFeed } from "../../src/pipeline/InventoryFeed.ts"
import { type InventoryStore, InventoryStores } from "../../src/pipeline/InventoryStore.ts"
import { factory } from "../../src/processor/inventory/InventoryProcessor.ts"
import * as InventoryFeedQueue from "../../src/service/InventoryFeedQueue.ts"
import { hostGpus, listed, nodeA, nodeB, read } from "../processor/inventory/Observations.ts"
import { recordingMetrics } from "../support/RecordingMetrics.ts"

/**
 * The `InventoryStore` contract (src/pipeline/InventoryStore.ts), stated once and run against every
 * store. Each scenario is seen as the service uses a store: one run of the service is one inventory
 * processor built by its factory, on a store freshly opened from the backend, whose events go to the
 * exporters and whose changes go to the feed; a run stops as a term ends, once its processor has
 * written what it learnt (the processor closes, the feed ends, whoever keeps the store from the feed
 * writes the last changes).
 */

/** The nodes of a cluster that the scenarios read: three, each with GPUs of its own. */
export type ClusterNodes = readonly [NodeRef, NodeRef, NodeRef]

/** Where a store keeps its GPUs, for one scenario: a bucket, tables, a process's memory, the API servers of clusters. */
export interface StoreBackend {
  /** Opens the store of `cluster` on this backend, as the service does for one term. */
  readonly open: (cluster: string) => Effect.Effect<InventoryStore["Service"], ComponentStartError, Scope.Scope>
  /** The nodes of `cluster`, as the receiver names them in observations. */
  readonly nodes: (cluster: string) => Effect.Effect<ClusterNodes>
  /**
   * Starts, for one run, the writer that keeps the store from the inventory feed; closing the scope is
   * its last pass. Nothing where the processor writes the store itself.
   */
  readonly keep: (cluster: string, feed: InventoryFeed["Service"]) => Effect.Effect<void, never, Scope.Scope>
  /** A node is deleted from `cluster` while no run is up. */
  readonly deleteNode: (cluster: string, node: string) => Effect.Effect<void>
}

/** What a store can and cannot do, stated by its adapter: the scenarios assert what follows from it. */
export interface StoreCapabilities {
  /**
   * The store still holds the GPUs of a node deleted while no run was up, so the next run can report
   * them `removed`. False for a store kept on the nodes themselves: the node took them with it.
   */
  readonly keepsDeletedNodes: boolean
  /**
   * The store gives back every fact of the last reading (product, PCI bus id, driver), so an unchanged
   * GPU read again after a restart causes no event. False: the first reading re-affirms it as `observed`.
   */
  readonly keepsReadingFacts: boolean
  /**
   * The store gives back each GPU's last health verdict, so a change found by the first reading after a
   * restart is a `health` event. False: health is unknown after a restart, and unknown to known is no event.
   */
  readonly keepsHealth: boolean
}

export interface StoreAdapter {
  /** The store's kind, as its errors and logs name it: `memory`, `nats-kv`, `postgres`, `node-labels`. */
  readonly kind: string
  /** The inventory's `store` setting that names the store. */
  readonly storeSetting: string
  /** Where two clusters keep their GPUs, in a few words: `sharing one KV bucket`, `each with its own API server`. */
  readonly backendOfClusters: string
  readonly capabilities: StoreCapabilities
  /** A backend for one scenario, holding `clusters`; released (emptied, dropped, stopped) with the scope. */
  readonly backend: (clusters: ReadonlyArray<string>) => Effect.Effect<StoreBackend, never, Scope.Scope>
}

/** Three nodes on three machines, for backends that know no cluster of their own. */
export const detachedNodes: ClusterNodes = [
  nodeA,
  nodeB,
  { name: "gpu-node-c", uid: "uid-c", providerId: "aws:///eu-west-1c/i-0ccc" },
]

const eu = "prod-eu"
const us = "prod-us"

/** Short enough that a removal is decided at the processor's next tick. */
const removalGrace = "1s"

const configOf = (store: string) => {
  const config = factory.validate({ removalGrace, store })
  if (Result.isFailure(config)) throw new Error(`inventory config refused: ${JSON.stringify(config.failure)}`)
  return config.success
}

const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

/** One run of the service, as a scenario drives it. */
interface Run {
  readonly observe: (observation: NodeObservation) => Effect.Effect<void>
  /** Every event handed to the exporters so far, in order. */
  readonly events: ReadonlyArray<InventoryEvent>
  /** Where the run's `gpu_serials_gpu_info` series place each GPU now: node by UUID. */
  readonly placed: () => Readonly<Record<string, string>>
}

/** The service metrics of a run, its `gpu_serials_gpu_info` source kept for `placed`. */
const gpuInfoMetrics = (info: { series: () => ReadonlyArray<GpuInfoFields> }) =>
  Effect.gen(function* () {
    const base = yield* ServiceMetrics
    return ServiceMetrics.of({
      ...base,
      observeGpus: (source) =>
        Effect.sync(() => {
          info.series = () => [...source.gpus()].map(source.fields)
        }),
    })
  }).pipe(Effect.provide(recordingMetrics().layer))

/** One run of the service for `cluster` on `backend`, driven by `script`; stopped when the script ends. */
const runOnce = <A>(
  adapter: StoreAdapter,
  backend: StoreBackend,
  cluster: string,
  script: (run: Run) => Effect.Effect<A>,
): Effect.Effect<{ readonly result: A; readonly events: ReadonlyArray<InventoryEvent> }> =>
  Effect.scoped(
    Effect.gen(function* () {
      const feed = yield* InventoryFeedQueue.make
      yield* backend.keep(cluster, feed)
      // Runs after the processor flushed and before the keeper's last pass, as the service ends a term.
      yield* Effect.addFinalizer(() => feed.end)
      const events: Array<InventoryEvent> = []
      const info = { series: (): ReadonlyArray<GpuInfoFields> => [] }
      const config = configOf(adapter.storeSetting)
      const processor = yield* factory
        .create(config, { id: "inventory", clusterName: cluster, serviceVersion: "0.1.0" })
        .pipe(
          Effect.provideService(
            EventConsumer,
            EventConsumer.of({ export: (batch) => Effect.sync(() => void events.push(...batch)) }),
          ),
          Effect.provideService(
            InventoryStores,
            InventoryStores.of({
              named: (name) =>
                name === config.store ? backend.open(cluster) : Effect.die(new Error(`no store named ${name}`)),
            }),
          ),
          Effect.provideService(InventoryFeed, feed),
          Effect.provideService(ServiceMetrics, yield* gpuInfoMetrics(info)),
          Effect.orDie,
        )
      const placed = () => Object.fromEntries(info.series().map((series) => [series.uuid, series.node]))
      const result = yield* script({ observe: processor.observe, events, placed })
      // The run stops as the service stops a term: the processor's closing writes what its store has not got.
      return { result, events }
    }),
  )

/** What a store freshly opened on the backend holds: `node on machine` by UUID. */
const stored = (adapter: StoreAdapter, backend: StoreBackend, cluster: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const store = yield* backend.open(cluster)
      assert.strictEqual(store.kind, adapter.kind)
      const known: ReadonlyArray<KnownGpu> = yield* store.load
      return Object.fromEntries(known.map((gpu) => [gpu.uuid, `${gpu.node} on ${gpu.machine}`]))
    }),
  ).pipe(Effect.orDie)

const machineOf = (node: NodeRef): string => machineIdentity(node.providerId).machine

/** `node` by UUID, as `placed` gives it. */
const placedOn = (...groups: ReadonlyArray<readonly [ReadonlyArray<Gpu>, NodeRef]>) =>
  Object.fromEntries(groups.flatMap(([gpus, node]) => gpus.map((gpu) => [gpu.uuid, node.name])))

/** `node on machine` by UUID, as `stored` gives it. */
const storedOn = (...groups: ReadonlyArray<readonly [ReadonlyArray<Gpu>, NodeRef]>) =>
  Object.fromEntries(
    groups.flatMap(([gpus, node]) => gpus.map((gpu) => [gpu.uuid, `${node.name} on ${machineOf(node)}`])),
  )

const uuidsOf = (gpus: ReadonlyArray<Gpu>): ReadonlyArray<string> => gpus.map((gpu) => gpu.uuid).sort()

const uuidsOfKind = (events: ReadonlyArray<InventoryEvent>, kind: InventoryEvent["record"]["event"]) =>
  events
    .filter((event) => event.record.event === kind)
    .map((event) => event.record.uuid)
    .sort()

/** Every GPU read again after a restart that the store cannot give back every fact of is re-affirmed once. */
const reaffirmed = (capabilities: StoreCapabilities, ...readAgain: ReadonlyArray<ReadonlyArray<Gpu>>) =>
  capabilities.keepsReadingFacts ? [] : uuidsOf(readAgain.flat())

/** Polls, on the real clock, until `condition` holds; dies with `what` after 20 seconds. */
const eventually = (what: string, condition: () => boolean) =>
  Effect.gen(function* () {
    const start = yield* Clock.currentTimeMillis
    while (!condition()) {
      if ((yield* Clock.currentTimeMillis) - start > 20_000) {
        return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      }
      yield* Effect.sleep("50 millis")
    }
  })

/** The GPUs of one host: four, with UUIDs and serials of their own. */
const gpusOf = (host: string) => hostGpus(host, 4)

const healthy: GpuHealthSignals = {
  remappedRows: { correctable: 0, uncorrectable: 0, pending: false, failure: false },
  ecc: { enabled: true, volatileUncorrectable: 0 },
  pcie: { linkWidth: { current: 16, max: 16 } },
}

/** A GPU whose remapped row waits for a reset: degraded. */
const remapPending: GpuHealthSignals = {
  ...healthy,
  remappedRows: { correctable: 0, uncorrectable: 1, pending: true, failure: false },
}

const withHealth = (gpus: ReadonlyArray<Gpu>, sick: Gpu | undefined, signals: GpuHealthSignals) =>
  gpus.map((gpu) => ({ ...gpu, health: gpu === sick ? signals : healthy }))

/** Runs the contract's scenarios against the store of `adapter`. */
export const inventoryStoreContract = (adapter: StoreAdapter): void => {
  const { capabilities } = adapter

  describe.concurrent(`InventoryStore contract: ${adapter.kind}`, () => {
    it.live("restart: a new run loads every GPU where the last one left it, and announces none as added", () =>
      Effect.gen(function* () {
        const backend = yield* adapter.backend([eu])
        const [a, b] = yield* backend.nodes(eu)
        const [gpusA, gpusB] = [gpusOf("a"), gpusOf("b")]
        const readBoth = (run: Run) =>
          Effect.gen(function* () {
            yield* run.observe(read(a, yield* now, gpusA))
            yield* run.observe(read(b, yield* now, gpusB))
          })

        const first = yield* runOnce(adapter, backend, eu, readBoth)
        assert.deepStrictEqual(uuidsOfKind(first.events, "added"), uuidsOf([...gpusA, ...gpusB]))

        const second = yield* runOnce(adapter, backend, eu, (run) =>
          Effect.gen(function* () {
            const atStart = run.placed()
            yield* readBoth(run)
            return atStart
          }),
        )
        assert.deepStrictEqual(second.result, placedOn([gpusA, a], [gpusB, b]))
        assert.deepStrictEqual(uuidsOfKind(second.events, "added"), [])
        assert.deepStrictEqual(uuidsOfKind(second.events, "observed"), reaffirmed(capabilities, gpusA, gpusB))
        assert.strictEqual(second.events.length, reaffirmed(capabilities, gpusA, gpusB).length)
      }),
    )

    it.live(
      "move while down: a GPU read on another machine is one moved from where the store had it, then held there",
      () =>
        Effect.gen(function* () {
          const backend = yield* adapter.backend([eu])
          const [a, b] = yield* backend.nodes(eu)
          const [gpusA, gpusB] = [gpusOf("a"), gpusOf("b")]
          const [board, ...stayed] = gpusA
          if (board === undefined) return yield* Effect.die(new Error("a host without GPUs"))
          // The board takes the next free index on its new host.
          const arrived: Gpu = { ...board, index: gpusB.length }

          yield* runOnce(adapter, backend, eu, (run) =>
            Effect.gen(function* () {
              yield* run.observe(read(a, yield* now, gpusA))
              yield* run.observe(read(b, yield* now, gpusB))
            }),
          )
          const second = yield* runOnce(adapter, backend, eu, (run) =>
            Effect.gen(function* () {
              yield* run.observe(read(a, yield* now, stayed))
              yield* run.observe(read(b, yield* now, [...gpusB, arrived]))
            }),
          )

          const moved = second.events.filter((event) => event.record.event === "moved").map((event) => event.record)
          assert.deepStrictEqual(
            moved.map((record) => [
              record.uuid,
              record.node,
              record.machine,
              record.previousNode,
              record.previousMachine,
            ]),
            [[board.uuid, b.name, machineOf(b), a.name, machineOf(a)]],
          )
          assert.deepStrictEqual(uuidsOfKind(second.events, "added"), [])
          assert.deepStrictEqual(uuidsOfKind(second.events, "removed"), [])
          assert.deepStrictEqual(uuidsOfKind(second.events, "observed"), reaffirmed(capabilities, stayed, gpusB))
          assert.deepStrictEqual(yield* stored(adapter, backend, eu), storedOn([stayed, a], [[...gpusB, arrived], b]))
        }),
    )

    it.live(
      capabilities.keepsDeletedNodes
        ? "removal while down: the GPUs of a node deleted and of a node whose device-plugin pod went are removed after the grace, and gone from the store"
        : "removal while down: a deleted node took its GPUs out of the store, so none is reported for it; a node whose device-plugin pod went is removed after the grace; nothing else",
      () =>
        Effect.gen(function* () {
          const backend = yield* adapter.backend([eu])
          const [deleted, kept, podless] = yield* backend.nodes(eu)
          const [gpusDeleted, gpusKept, gpusPodless] = [gpusOf("a"), gpusOf("b"), gpusOf("c")]
          const first = yield* runOnce(adapter, backend, eu, (run) =>
            Effect.gen(function* () {
              yield* run.observe(read(deleted, yield* now, gpusDeleted))
              yield* run.observe(read(kept, yield* now, gpusKept))
              yield* run.observe(read(podless, yield* now, gpusPodless))
            }),
          )
          assert.strictEqual(uuidsOfKind(first.events, "added").length, 12)
          yield* backend.deleteNode(eu, deleted.name)

          const removed = capabilities.keepsDeletedNodes ? [...gpusDeleted, ...gpusPodless] : gpusPodless
          const second = yield* runOnce(adapter, backend, eu, (run) =>
            Effect.gen(function* () {
              const atStart = run.placed()
              // The receiver's first list: the deleted node is missing, the other two there, one without its pod.
              yield* run.observe(listed(yield* now, [kept, podless], [kept]))
              yield* run.observe(read(kept, yield* now, gpusKept))
              yield* eventually(
                `${removed.length} GPUs removed`,
                () => uuidsOfKind(run.events, "removed").length >= removed.length,
              )
              return atStart
            }),
          )

          assert.deepStrictEqual(
            second.result,
            capabilities.keepsDeletedNodes
              ? placedOn([gpusDeleted, deleted], [gpusKept, kept], [gpusPodless, podless])
              : placedOn([gpusKept, kept], [gpusPodless, podless]),
          )
          assert.deepStrictEqual(uuidsOfKind(second.events, "removed"), uuidsOf(removed))
          assert.deepStrictEqual(uuidsOfKind(second.events, "added"), [])
          assert.deepStrictEqual(uuidsOfKind(second.events, "moved"), [])
          assert.deepStrictEqual(uuidsOfKind(second.events, "observed"), reaffirmed(capabilities, gpusKept))
          assert.deepStrictEqual(yield* stored(adapter, backend, eu), storedOn([gpusKept, kept]))
        }),
    )

    it.live(
      `two clusters (${adapter.backendOfClusters}) never see or remove each other's GPUs, even with the same UUIDs`,
      () =>
        Effect.gen(function* () {
          const backend = yield* adapter.backend([eu, us])
          const [euFirst, , euThird] = yield* backend.nodes(eu)
          const [usFirst, , usThird] = yield* backend.nodes(us)
          // The same GPUs (same UUIDs) in both clusters: the hardest case for keys without the cluster.
          const [gpusFirst, gpusThird] = [gpusOf("a"), gpusOf("c")]
          const readBoth = (first: NodeRef, third: NodeRef) => (run: Run) =>
            Effect.gen(function* () {
              const atStart = run.placed()
              yield* run.observe(read(first, yield* now, gpusFirst))
              yield* run.observe(read(third, yield* now, gpusThird))
              return atStart
            })

          const euBefore = yield* runOnce(adapter, backend, eu, readBoth(euFirst, euThird))
          assert.deepStrictEqual(uuidsOfKind(euBefore.events, "added"), uuidsOf([...gpusFirst, ...gpusThird]))
          const usBefore = yield* runOnce(adapter, backend, us, readBoth(usFirst, usThird))
          assert.deepStrictEqual(usBefore.result, {})
          assert.deepStrictEqual(uuidsOfKind(usBefore.events, "added"), uuidsOf([...gpusFirst, ...gpusThird]))

          // The other cluster's list names none of this cluster's nodes; its third node lost its pod meanwhile.
          const usAfter = yield* runOnce(adapter, backend, us, (run) =>
            Effect.gen(function* () {
              const atStart = run.placed()
              yield* run.observe(listed(yield* now, [usFirst, usThird], [usFirst]))
              yield* run.observe(read(usFirst, yield* now, gpusFirst))
              yield* eventually(
                `${gpusThird.length} GPUs removed`,
                () => uuidsOfKind(run.events, "removed").length >= gpusThird.length,
              )
              return atStart
            }),
          )
          assert.deepStrictEqual(usAfter.result, placedOn([gpusFirst, usFirst], [gpusThird, usThird]))
          assert.deepStrictEqual(uuidsOfKind(usAfter.events, "removed"), uuidsOf(gpusThird))
          assert.deepStrictEqual([...new Set(usAfter.events.map((event) => event.record.cluster))], [us])

          const euAfter = yield* runOnce(adapter, backend, eu, readBoth(euFirst, euThird))
          assert.deepStrictEqual(euAfter.result, placedOn([gpusFirst, euFirst], [gpusThird, euThird]))
          assert.deepStrictEqual(uuidsOfKind(euAfter.events, "added"), [])
          assert.deepStrictEqual(uuidsOfKind(euAfter.events, "removed"), [])
          assert.deepStrictEqual(
            uuidsOfKind(euAfter.events, "observed"),
            reaffirmed(capabilities, gpusFirst, gpusThird),
          )
          assert.deepStrictEqual(
            yield* stored(adapter, backend, eu),
            storedOn([gpusFirst, euFirst], [gpusThird, euThird]),
          )
          assert.deepStrictEqual(yield* stored(adapter, backend, us), storedOn([gpusFirst, usFirst]))
        }),
    )

    it.live(
      capabilities.keepsHealth
        ? "restart with a degraded GPU re-announces nothing; one reset while down is one health event from the stored state"
        : "restart with a degraded GPU re-announces nothing; health is unknown after a restart, so a reset while down is no event",
      () =>
        Effect.gen(function* () {
          const backend = yield* adapter.backend([eu])
          const [a] = yield* backend.nodes(eu)
          const gpusA = gpusOf("a")
          const sick = gpusA[1]
          const degraded = withHealth(gpusA, sick, remapPending)
          const first = yield* runOnce(adapter, backend, eu, (run) =>
            Effect.gen(function* () {
              yield* run.observe(read(a, yield* now, withHealth(gpusA, undefined, healthy)))
              yield* run.observe(read(a, yield* now, degraded))
            }),
          )
          assert.deepStrictEqual(uuidsOfKind(first.events, "health"), [sick?.uuid])

          const second = yield* runOnce(adapter, backend, eu, (run) =>
            Effect.gen(function* () {
              yield* run.observe(read(a, yield* now, degraded))
            }),
          )
          assert.deepStrictEqual(uuidsOfKind(second.events, "health"), [])
          assert.deepStrictEqual(uuidsOfKind(second.events, "observed"), reaffirmed(capabilities, gpusA))
          assert.strictEqual(second.events.length, reaffirmed(capabilities, gpusA).length)

          // Reset while the service was down: the first reading of the next run finds the GPU healthy again.
          const third = yield* runOnce(adapter, backend, eu, (run) =>
            Effect.gen(function* () {
              yield* run.observe(read(a, yield* now, withHealth(gpusA, undefined, healthy)))
            }),
          )
          assert.deepStrictEqual(
            third.events
              .filter((event) => event.record.event === "health")
              .map((event) => [event.record.uuid, event.record.previousHealthState, event.record.health?.state]),
            capabilities.keepsHealth ? [[sick?.uuid, "degraded", "ok"]] : [],
          )
        }),
    )
  })
}
