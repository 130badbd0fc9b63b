import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Option, Scope } from "effect"
import { TestClock } from "effect/testing"
import type { InventoryEvent } from "../../src/domain/InventoryEvent.ts"
import * as QueuedExporter from "../../src/exporter/exporterhelper/QueuedExporter.ts"
import { defaultQueueSettings } from "../../src/exporter/exporterhelper/QueueSettings.ts"
import { SinkError } from "../../src/exporter/exporterhelper/Sink.ts"
import type { Exporter } from "../../src/pipeline/Exporter.ts"
import { builtinComponents } from "../../src/service/BuiltinComponents.ts"
import { ComponentRegistry } from "../../src/service/ComponentRegistry.ts"
import { ExporterFanout } from "../../src/service/ExporterFanout.ts"
import { scriptedSink } from "../exporter/exporterhelper/ScriptedSink.ts"
import { addedEvents } from "../exporter/InventoryEvents.ts"

/** An exporter that breaks its contract: every call hangs forever. */
const hangingExporter = (id: string): Exporter => ({
  id,
  export: () => Effect.never,
  flush: () => Effect.never,
  health: Effect.never,
  stats: Effect.never,
})

/** An exporter that keeps every event it is handed. */
const recordingExporter = (id: string) => {
  const received: Array<InventoryEvent> = []
  const exporter: Exporter = {
    id,
    export: (events) => Effect.sync(() => received.push(...events)),
    flush: () => Effect.void,
    health: Effect.succeed({ healthy: true }),
    stats: Effect.sync(() => ({ sent: received.length, failed: 0, retried: 0, dropped: 0, queued: 0 })),
  }
  return { exporter, received }
}

const advance = (duration: Duration.Input) =>
  Effect.gen(function* () {
    const steps = Math.ceil(Duration.toMillis(Duration.fromInputUnsafe(duration)) / 100)
    for (let step = 0; step < steps; step++) yield* TestClock.adjust("100 millis")
  })

const closeAdvancing = (scope: Scope.Closeable, duration: Duration.Input) =>
  Effect.gen(function* () {
    const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
    yield* advance(duration)
    yield* Fiber.join(closing)
  })

describe("ExporterFanout", () => {
  it.effect("keeps feeding every exporter while another one hangs", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const recording = recordingExporter("nats")
      const fanout = yield* ExporterFanout.make([hangingExporter("otlp"), recording.exporter], {
        laneCapacity: 4,
      }).pipe(Scope.provide(scope))
      const events = addedEvents(200)

      for (let batch = 0; batch < 20; batch++) {
        yield* fanout.export(events.slice(batch * 10, batch * 10 + 10))
        yield* advance("100 millis")
      }

      assert.deepStrictEqual(recording.received, events)
      const flushing = yield* Effect.forkChild(fanout.flush("2 seconds"))
      yield* advance("3 seconds")
      yield* Fiber.join(flushing)

      const healthFiber = yield* Effect.forkChild(fanout.health)
      const statsFiber = yield* Effect.forkChild(fanout.stats)
      yield* advance("2 seconds")
      const health = yield* Fiber.join(healthFiber)
      const stats = yield* Fiber.join(statsFiber)

      assert.isFalse(health.healthy)
      assert.deepStrictEqual(health.exporters.nats, { healthy: true })
      assert.isFalse(health.exporters.otlp?.healthy)
      assert.include(health.message ?? "", "otlp:")
      assert.strictEqual(stats.nats?.sent, 200)
      // The hanging exporter holds one batch, its lane four more; the other fifteen were dropped.
      assert.strictEqual(stats.otlp?.dropped, 150)
      assert.strictEqual(stats.otlp?.queued, 50)

      yield* closeAdvancing(scope, "2 seconds")
    }),
  )

  it.effect("aggregates health and stats per exporter id", () =>
    Effect.gen(function* () {
      const failing = scriptedSink(() =>
        Effect.fail(new SinkError({ message: "connection refused", retryable: false })),
      )
      const working = scriptedSink(() => Effect.void)
      const broken = yield* QueuedExporter.make({ id: "http", sink: failing, settings: defaultQueueSettings })
      const fine = yield* QueuedExporter.make({ id: "stdout", sink: working, settings: defaultQueueSettings })
      const fanout = yield* ExporterFanout.make([broken, fine])

      yield* fanout.export(addedEvents(5))
      yield* fanout.flush("10 seconds")

      assert.deepStrictEqual(fanout.ids, ["http", "stdout"])
      assert.deepStrictEqual(yield* fanout.health, {
        healthy: false,
        message: "http: connection refused",
        exporters: {
          http: { healthy: false, message: "connection refused" },
          stdout: { healthy: true },
        },
      })
      assert.deepStrictEqual(yield* fanout.stats, {
        http: { sent: 0, failed: 5, retried: 0, dropped: 5, queued: 0 },
        stdout: { sent: 5, failed: 0, retried: 0, dropped: 0, queued: 0 },
      })
      assert.strictEqual(working.delivered.length, 5)
    }),
  )

  it.effect("is built as a layer from configured exporters", () =>
    Effect.gen(function* () {
      const registry = ComponentRegistry.make(builtinComponents)
      const configured = yield* registry.resolveExporters(
        [
          { id: "stdout", type: "stdout", section: {} },
          { id: "memory", type: "memory", module: "./third-party/memory-exporter.ts", section: {} },
        ],
        { baseDir: new URL("./", import.meta.url).pathname },
      )
      yield* Effect.gen(function* () {
        const exporters = yield* Effect.forEach(configured, (entry) =>
          entry.create({ clusterName: "prod-eu", serviceVersion: "0.1.0" }),
        )
        const fanout = yield* ExporterFanout.make(exporters)
        assert.deepStrictEqual(fanout.ids, ["stdout", "memory"])
        assert.deepStrictEqual((yield* fanout.health).healthy, true)
      }).pipe(Effect.scoped)
    }),
  )

  it.live("on a hub, hands a slow exporter with a small buffer every record once, in order, dropping none", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const slow = scriptedSink(() => Effect.andThen(Deferred.await(gate), Effect.sleep("1 millis")))
      const recording = recordingExporter("fast")
      const fanout = yield* ExporterFanout.make(
        [
          yield* QueuedExporter.make({
            id: "slow",
            sink: slow,
            settings: { ...defaultQueueSettings, queueSize: 7, batchSize: 3 },
          }),
          recording.exporter,
        ],
        { waitForRoom: true, stallAfter: "200 millis" },
      )
      const events = addedEvents(300)
      const handing = yield* Effect.forkChild(
        Effect.forEach(
          [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
          (batch) => fanout.export(events.slice(batch * 30, batch * 30 + 30)),
          {
            discard: true,
          },
        ),
      )
      // The slow exporter writes nothing yet: the hub waits, and health names the full buffer.
      let health = yield* fanout.health
      for (let attempt = 0; attempt < 500 && health.healthy; attempt++) {
        yield* Effect.sleep("20 millis")
        health = yield* fanout.health
      }
      assert.isFalse(health.healthy)
      assert.include(health.exporters.slow?.message ?? "", "buffer full for")
      assert.isFalse(Option.isSome(yield* Fiber.await(handing).pipe(Effect.timeoutOption("50 millis"))))

      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(handing)
      yield* fanout.flush("30 seconds")

      assert.deepStrictEqual(slow.delivered, events)
      assert.deepStrictEqual(recording.received, events)
      const stats = yield* fanout.stats
      assert.strictEqual(stats.slow?.dropped, 0)
      assert.strictEqual(stats.slow?.sent, 300)
      assert.isTrue((yield* fanout.health).healthy)
    }).pipe(Effect.scoped),
  )

  it.live(
    "on a hub, a wait for a full exporter ends when the hub is interrupted, handing over nothing of the batch",
    () =>
      Effect.gen(function* () {
        const slow = scriptedSink(() => Effect.never)
        const exporter = yield* QueuedExporter.make({
          id: "stuck",
          sink: slow,
          settings: { ...defaultQueueSettings, queueSize: 2, batchSize: 2 },
          shutdownTimeout: "10 millis",
        })
        const fanout = yield* ExporterFanout.make([exporter], { waitForRoom: true, shutdownTimeout: "10 millis" })
        yield* fanout.export(addedEvents(5))
        const waiting = yield* Effect.forkChild(fanout.export(addedEvents(5, 5)))
        yield* Effect.sleep("100 millis")
        yield* Fiber.interrupt(waiting)
        const stats = yield* fanout.stats
        // The first batch: 2 in the buffer, 3 in the lane; the interrupted one was never handed over.
        assert.strictEqual(stats.stuck?.queued, 5)
        assert.strictEqual(stats.stuck?.dropped, 0)
      }).pipe(Effect.scoped),
  )
})
