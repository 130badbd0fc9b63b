import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { TestClock } from "effect/testing"
import { ComponentStartError } from "../../../src/component/ComponentStartError.ts"
import { ShutdownDeadline } from "../../../src/component/ShutdownDeadline.ts"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import { EventConsumer } from "../../../src/pipeline/EventConsumer.ts"
import { InventoryFeed } from "../../../src/pipeline/InventoryFeed.ts"
import { InventoryStore, InventoryStoreError, InventoryStores } from "../../../src/pipeline/InventoryStore.ts"
import type { InventoryRules } from "../../../src/processor/inventory/Inventory.ts"
import { factory, InventoryProcessor } from "../../../src/processor/inventory/InventoryProcessor.ts"
import * as MemoryInventoryStore from "../../../src/processor/inventory/MemoryInventoryStore.ts"
import * as InventoryFeedQueue from "../../../src/service/InventoryFeedQueue.ts"
import { capturedLog } from "../../log/CapturedLog.ts"
import { recordingMetrics } from "../../support/RecordingMetrics.ts"
import { gone, hostGpus, kinds, nodeA, nodeB, read } from "./Observations.ts"

const quick: InventoryRules = { cluster: "prod-eu", reportIntervalMs: 60_000, removalGraceMs: 30_000 }

const gpusA = hostGpus("a")
const gpusB = hostGpus("b")

/** The sink of a test: every batch handed over, in order. */
const capturingSink = () => {
  const batches: Array<ReadonlyArray<InventoryEvent>> = []
  const sink = (events: ReadonlyArray<InventoryEvent>) => Effect.sync(() => void batches.push(events))
  return { batches, sink }
}

const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

/** Moves virtual time forward a second at a time, so every tick and retry gets to run. */
const advanceSeconds = (seconds: number) =>
  Effect.gen(function* () {
    for (let second = 0; second < seconds; second++) yield* TestClock.adjust("1 second")
  })

const storeError = (operation: "load" | "apply") =>
  new InventoryStoreError({ store: "nats-kv", operation, message: "connection refused", conflict: false })

describe("InventoryProcessor", () => {
  it.effect("publishes the GPUs it loaded at start, then every change, without waiting for a reader", () =>
    Effect.gen(function* () {
      const { sink } = capturingSink()
      const first = yield* MemoryInventoryStore.make()
      const feed = yield* InventoryFeedQueue.make
      const before = yield* InventoryProcessor.make({ settings: quick, sink, store: first.store, feed }).pipe(
        Effect.provide(recordingMetrics().layer),
      )
      yield* before.observe(read(nodeA, yield* now, gpusA))
      yield* before.observe(read(nodeB, yield* now, gpusB))
      yield* before.flush
      const published = yield* feed.take
      assert.strictEqual(published.length, 16)

      const restarted = yield* InventoryFeedQueue.make
      const second = yield* MemoryInventoryStore.make(yield* first.current)
      const after = yield* InventoryProcessor.make({
        settings: quick,
        sink,
        store: second.store,
        feed: restarted,
      }).pipe(Effect.provide(recordingMetrics().layer))
      const loaded = yield* restarted.take
      assert.deepStrictEqual(
        new Set(loaded.map((change) => change.uuid)),
        new Set(published.map((change) => change.uuid)),
      )
      assert.isTrue(loaded.every((change) => change._tag === "Upsert"))

      // A GPU read on the other node is published as an upsert there: one change per GPU, the latest.
      const swapped = gpusB[0]
      if (swapped === undefined) throw new Error("no GPU")
      yield* after.observe(read(nodeA, yield* now, [...gpusA, swapped]))
      const moved = yield* restarted.take
      assert.deepStrictEqual(
        moved.map((change) => (change._tag === "Upsert" ? [change.uuid, change.gpu.node] : [change.uuid])),
        [[swapped.uuid, nodeA.name]],
      )
    }),
  )

  it.effect("hands each reading's events to the sink, counts them and serves the inventory gauges", () =>
    Effect.gen(function* () {
      const metrics = recordingMetrics()
      const { batches, sink } = capturingSink()
      const memory = yield* MemoryInventoryStore.make()
      const processor = yield* InventoryProcessor.make({ settings: quick, sink, store: memory.store }).pipe(
        Effect.provide(metrics.layer),
      )

      yield* processor.observe(read(nodeA, yield* now, gpusA))
      yield* processor.observe(read(nodeA, yield* now, gpusA))

      assert.strictEqual(batches.length, 1)
      assert.deepStrictEqual(kinds(batches[0] ?? []), Array(8).fill("added"))
      assert.deepStrictEqual(metrics.recorded.events, { added: 8 })
      assert.deepStrictEqual(metrics.recorded.inventory(), {
        gpus: 8,
        nodes: 1,
        gpusByModel: { "NVIDIA H100 80GB HBM3": 8 },
      })
      yield* processor.flush
      assert.strictEqual((yield* memory.current).length, 8)
    }),
  )

  it.effect("re-affirms on its ticks and removes a node gone past the grace", () =>
    Effect.gen(function* () {
      const metrics = recordingMetrics()
      const { batches, sink } = capturingSink()
      const memory = yield* MemoryInventoryStore.make()
      const processor = yield* InventoryProcessor.make({
        settings: quick,
        sink,
        store: memory.store,
        tickInterval: "1 second",
      }).pipe(Effect.provide(metrics.layer))

      yield* processor.observe(read(nodeA, yield* now, gpusA))
      yield* advanceSeconds(59)
      assert.strictEqual(batches.length, 1)

      yield* advanceSeconds(1)
      assert.strictEqual(batches.length, 2)
      assert.deepStrictEqual(kinds(batches[1] ?? []), Array(8).fill("observed"))
      assert.strictEqual(batches[1]?.[0]?.record.time, new Date(60_000).toISOString())

      yield* processor.observe(gone(nodeA, yield* now))
      yield* advanceSeconds(29)
      assert.strictEqual(batches.length, 2)
      yield* advanceSeconds(1)
      assert.strictEqual(batches.length, 3)
      assert.deepStrictEqual(kinds(batches[2] ?? []), Array(8).fill("removed"))

      yield* advanceSeconds(120)
      assert.strictEqual(batches.length, 3)
      assert.deepStrictEqual(metrics.recorded.events, { added: 8, observed: 8, removed: 8 })
      assert.strictEqual(metrics.recorded.inventory().gpus, 0)
      yield* processor.flush
      assert.deepStrictEqual(yield* memory.current, [])
    }),
  )

  it.effect("rebuilds the inventory from its store after a restart: no added storm, moves still seen", () =>
    Effect.gen(function* () {
      const metrics = recordingMetrics()
      const memory = yield* MemoryInventoryStore.make()
      const first = capturingSink()
      const firstRun = yield* Scope.make()
      const before = yield* InventoryProcessor.make({ settings: quick, sink: first.sink, store: memory.store }).pipe(
        Effect.provide(metrics.layer),
        Scope.provide(firstRun),
      )
      yield* before.observe(read(nodeA, yield* now, gpusA))
      yield* before.observe(read(nodeB, yield* now, gpusB))
      yield* Scope.close(firstRun, Exit.void)
      assert.strictEqual((yield* memory.current).length, 16)

      yield* TestClock.adjust("10 seconds")
      const second = capturingSink()
      const after = yield* InventoryProcessor.make({ settings: quick, sink: second.sink, store: memory.store }).pipe(
        Effect.provide(metrics.layer),
      )
      const [a0, ...restA] = gpusA
      if (a0 === undefined) return yield* Effect.die(new Error("fixture without GPUs"))
      yield* after.observe(read(nodeA, yield* now, restA))
      yield* after.observe(read(nodeB, yield* now, [...gpusB, a0]))

      assert.deepStrictEqual(second.batches.map(kinds), [["moved"]])
      assert.strictEqual(second.batches[0]?.[0]?.record.previousNode, "gpu-node-a")
      assert.strictEqual(metrics.recorded.inventory().gpus, 16)
    }),
  )

  it.effect("keeps writing changes a failing store refused, and says so in its health meanwhile", () =>
    Effect.gen(function* () {
      const metrics = recordingMetrics()
      const memory = yield* MemoryInventoryStore.make()
      let refusals = 3
      const flaky = InventoryStore.of({
        kind: "nats-kv",
        load: memory.store.load,
        apply: (changes) => (refusals-- > 0 ? Effect.fail(storeError("apply")) : memory.store.apply(changes)),
      })
      const { sink } = capturingSink()
      const processor = yield* InventoryProcessor.make({ settings: quick, sink, store: flaky }).pipe(
        Effect.provide(metrics.layer),
      )

      yield* processor.observe(read(nodeA, yield* now, gpusA))
      yield* Effect.yieldNow
      assert.deepStrictEqual(yield* processor.health, {
        healthy: false,
        message: "inventory store: connection refused",
      })
      assert.deepStrictEqual(yield* memory.current, [])

      yield* processor.observe(read(nodeB, yield* now, gpusB))
      yield* advanceSeconds(10)
      assert.deepStrictEqual(yield* processor.health, { healthy: true })
      assert.strictEqual((yield* memory.current).length, 16)
    }),
  )

  it.effect("closing within the shutdown deadline gives up on a store that does not answer, and says so", () =>
    Effect.gen(function* () {
      const log = capturedLog()
      const memory = yield* MemoryInventoryStore.make()
      const hung = InventoryStore.of({ kind: "nats-kv", load: memory.store.load, apply: () => Effect.never })
      const deadline = yield* ShutdownDeadline.make("4 seconds")
      const scope = yield* Scope.make()
      const processor = yield* InventoryProcessor.make({
        settings: quick,
        sink: capturingSink().sink,
        store: hung,
      }).pipe(
        Effect.provide(recordingMetrics().layer),
        Effect.provideService(ShutdownDeadline, deadline),
        Effect.provide(log.layer),
        Scope.provide(scope),
      )
      yield* processor.observe(read(nodeA, yield* now, gpusA))
      yield* Effect.yieldNow

      yield* deadline.begin
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* advanceSeconds(5)
      yield* Fiber.join(closing)
      const unwritten = log.events().filter((event) => event.msg === "inventory store did not take the last changes")
      assert.deepStrictEqual(
        unwritten.map((event) => event.store),
        ["nats-kv"],
      )
    }),
  )

  it.effect("does not start when its store cannot be loaded", () =>
    Effect.gen(function* () {
      let attempts = 0
      const down = InventoryStore.of({
        kind: "nats-kv",
        load: Effect.suspend(() => {
          attempts++
          return Effect.fail(storeError("load"))
        }),
        apply: () => Effect.void,
      })
      const starting = yield* InventoryProcessor.make({ settings: quick, sink: () => Effect.void, store: down }).pipe(
        Effect.provide(recordingMetrics().layer),
        Effect.flip,
        Effect.forkChild,
      )
      yield* advanceSeconds(10)
      const error = yield* Fiber.join(starting)

      assert.instanceOf(error, ComponentStartError)
      assert.strictEqual(error.component, "inventory")
      assert.strictEqual(error.message, "cannot load the known inventory from the nats-kv store: connection refused")
      assert.strictEqual(attempts, 3)
    }),
  )

  it.effect("is built by its factory from the event consumer and the store its config names", () =>
    Effect.gen(function* () {
      const { batches, sink } = capturingSink()
      const feed = yield* InventoryFeedQueue.make
      const services = Layer.mergeAll(
        Layer.succeed(EventConsumer, EventConsumer.of({ export: sink })),
        Layer.succeed(InventoryFeed, feed),
        Layer.succeed(
          InventoryStores,
          InventoryStores.of({
            named: (name) =>
              name === "memory"
                ? MemoryInventoryStore.storeFactory.create(undefined, { clusterName: "prod-west", id: name })
                : Effect.die(`no store ${name}`),
          }),
        ),
        recordingMetrics().layer,
      )
      assert.strictEqual(factory.kind, "processor")
      assert.strictEqual(factory.type, "inventory")

      const processor = yield* factory
        .create(factory.defaultConfig, { id: "inventory", clusterName: "prod-west", serviceVersion: "0.1.0" })
        .pipe(Effect.provide(services))
      yield* processor.observe(read(nodeA, yield* now, gpusA))

      assert.strictEqual(batches[0]?.length, 8)
      assert.strictEqual(batches[0]?.[0]?.record.cluster, "prod-west")

      const published = yield* feed.take
      assert.deepStrictEqual(
        published.map((change) => change._tag),
        Array.from({ length: 8 }, () => "Upsert"),
      )

      // The health limits of its config reach the verdict: 3 uncorrectable remapped rows fail a board at a limit of 2.
      const strict = yield* factory
        .create(
          { ...factory.defaultConfig, health: { ...factory.defaultConfig.health, remappedRowsLimit: 2 } },
          { id: "inventory", clusterName: "prod-west", serviceVersion: "0.1.0" },
        )
        .pipe(Effect.provide(services))
      const worn = gpusB.map((gpu) => ({ ...gpu, health: { remappedRows: { uncorrectable: 3 } } }))
      yield* strict.observe(read(nodeB, yield* now, worn))
      assert.deepStrictEqual(batches.at(-1)?.[0]?.record.health?.reasons, ["remapped-rows-limit"])
    }),
  )
})
