import { assert, describe, it } from "@effect/vitest"
import { jetstreamManager } from "@nats-io/jetstream"
import { connect, type Msg, type NatsConnection } from "@nats-io/transport-node"
import { Duration, Effect, Result } from "effect"
import { afterAll, beforeAll } from "vitest"
import { defaultQueueSettings } from "../../../src/exporter/exporterhelper/QueueSettings.ts"
import type { NatsExporterConfig } from "../../../src/exporter/nats/NatsConfig.ts"
import * as NatsExporter from "../../../src/exporter/nats/NatsExporter.ts"
import * as JsonLogger from "../../../src/log/JsonLogger.ts"
import type { Exporter } from "../../../src/pipeline/Exporter.ts"
import { addedEvent, addedEvents } from "../InventoryEvents.ts"
import { type NatsServer, startNatsServer } from "./NatsServer.ts"
import { streamRecordIds } from "./StreamRecordIds.ts"

let server: NatsServer
let observer: NatsConnection

beforeAll(async () => {
  server = await startNatsServer()
  observer = await connect({ servers: server.url })
})

afterAll(async () => {
  await observer?.close()
  await server?.dispose()
})

const settings = { clusterName: "prod-eu", serviceVersion: "0.1.0" }

const configFor = (overrides: Partial<NatsExporterConfig> = {}): NatsExporterConfig => ({
  ...NatsExporter.factory.defaultConfig,
  servers: [server.url],
  ...overrides,
})

const fastRetries = NatsExporter.makeFactory({
  queue: {
    ...defaultQueueSettings,
    batchSize: 20,
    retry: {
      ...defaultQueueSettings.retry,
      initialInterval: Duration.millis(100),
      maxInterval: Duration.millis(500),
      maxAttempts: 100,
      maxElapsed: Duration.seconds(30),
    },
  },
})

const eventually = <A>(read: Effect.Effect<A>, check: (value: A) => boolean): Effect.Effect<A> =>
  Effect.gen(function* () {
    for (;;) {
      const value = yield* read
      if (check(value)) return value
      yield* Effect.sleep("20 millis")
    }
  })

/** The service's JSON logger at info, its lines collected. */
const capturingLogger = (lines: Array<string>) =>
  JsonLogger.layer({ level: "info", output: { write: (line) => void lines.push(line) } })

const sentAll = (exporter: Exporter, count: number) => eventually(exporter.stats, (stats) => stats.sent === count)

/** The record ids of every message in `stream`, in stream order. */
const streamIds = (stream: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.promise(() => streamRecordIds(observer, stream))

describe("nats exporter", () => {
  it.live("publishes each event on its subject with the record as payload and its id, schema and type as headers", () =>
    Effect.gen(function* () {
      const received: Array<Msg> = []
      const subscription = observer.subscribe("core.>", {
        callback: (_error, message) => {
          received.push(message)
        },
      })
      yield* Effect.promise(() => observer.flush())
      const exporter = yield* fastRetries.create(configFor({ subjectPrefix: "core" }), { ...settings, id: "nats" })
      const dotted = addedEvent(1)
      const event = { ...dotted, record: { ...dotted.record, node: "ip-10-0-1-17.eu-west-1.compute.internal" } }
      yield* exporter.export([event])
      yield* sentAll(exporter, 1)
      yield* eventually(
        Effect.sync(() => received.length),
        (count) => count === 1,
      )
      subscription.unsubscribe()
      const message = received[0]
      assert.isDefined(message)
      if (message === undefined) return
      assert.strictEqual(message.subject, "core.prod-eu.ip-10-0-1-17%2Eeu-west-1%2Ecompute%2Einternal.added")
      assert.strictEqual(message.headers?.get("Nats-Msg-Id"), event.record.id)
      assert.strictEqual(message.headers?.get("Gpu-Serials-Schema"), "gpu-serials/v1")
      assert.strictEqual(message.headers?.get("Content-Type"), "application/json")
      assert.deepStrictEqual(message.json(), event.record)
    }).pipe(Effect.scoped),
  )

  it.live(
    "publishes a health change on <prefix>.<cluster>.<node>.health, from the node the GPU is on, with its health",
    () =>
      Effect.gen(function* () {
        const received: Array<Msg> = []
        const subscription = observer.subscribe("health.prod-eu.*.health", {
          callback: (_error, message) => {
            received.push(message)
          },
        })
        yield* Effect.promise(() => observer.flush())
        const exporter = yield* fastRetries.create(configFor({ subjectPrefix: "health" }), { ...settings, id: "nats" })
        const base = addedEvent(4)
        const turned = {
          ...base,
          record: {
            ...base.record,
            event: "health" as const,
            id: "id-4-health",
            health: { state: "failed" as const, reasons: ["row-remap-failure"], rmaEligible: true },
            previousHealthState: "degraded" as const,
          },
        }
        yield* exporter.export([base, turned])
        yield* sentAll(exporter, 2)
        yield* eventually(
          Effect.sync(() => received.length),
          (count) => count === 1,
        )
        subscription.unsubscribe()
        assert.strictEqual(received[0]?.subject, "health.prod-eu.gpu-node-4.health")
        assert.deepStrictEqual(received[0]?.json(), turned.record)
      }).pipe(Effect.scoped),
  )

  it.live("creates the stream and stores the same record once when it is published twice", () =>
    Effect.gen(function* () {
      const exporter = yield* fastRetries.create(configFor({ subjectPrefix: "dedupe", stream: "DEDUPE" }), {
        ...settings,
        id: "nats",
      })
      const events = addedEvents(3)
      yield* exporter.export(events)
      yield* exporter.export([events[0] ?? addedEvent(0)])
      yield* exporter.export(events)
      yield* sentAll(exporter, 7)
      const ids = yield* streamIds("DEDUPE")
      assert.deepStrictEqual(
        ids,
        events.map((event) => event.record.id),
      )
      const manager = yield* Effect.promise(() => jetstreamManager(observer))
      const info = yield* Effect.promise(() => manager.streams.info("DEDUPE"))
      assert.deepStrictEqual(info.config.subjects, ["dedupe.>"])
      assert.strictEqual(info.config.duplicate_window, 120_000_000_000)
    }).pipe(Effect.scoped),
  )

  it.live(
    "stores every event exactly once when the server is killed and restarted in the middle",
    () =>
      Effect.gen(function* () {
        const exporter = yield* fastRetries.create(configFor({ subjectPrefix: "outage", stream: "OUTAGE" }), {
          ...settings,
          id: "nats",
        })
        const events = addedEvents(300)
        yield* exporter.export(events.slice(0, 100))
        yield* sentAll(exporter, 100)
        yield* exporter.export(events.slice(100, 150))
        yield* Effect.promise(() => server.stop())
        yield* exporter.export(events.slice(150, 250))
        // A write failing against the stopped server shows the outage held the records back.
        const during = yield* eventually(exporter.stats, (stats) => stats.retried > 0)
        assert.isBelow(during.sent, 250)
        yield* Effect.promise(() => server.restart())
        yield* exporter.export(events.slice(250))
        yield* sentAll(exporter, 300)
        const ids = yield* streamIds("OUTAGE")
        assert.strictEqual(ids.length, 300)
        assert.deepStrictEqual([...ids].sort(), events.map((event) => event.record.id).sort())
        assert.strictEqual((yield* exporter.stats).dropped, 0)
      }).pipe(Effect.scoped),
    { timeout: 60_000 },
  )

  it.live("starts while NATS is unreachable and counts drops beyond its buffer", () =>
    Effect.gen(function* () {
      const factory = NatsExporter.makeFactory({ queue: { ...defaultQueueSettings, queueSize: 10, batchSize: 5 } })
      const exporter = yield* factory.create(configFor({ servers: ["nats://127.0.0.1:1"] }), {
        ...settings,
        id: "nats",
      })
      yield* exporter.export(addedEvents(15))
      const stats = yield* exporter.stats
      assert.strictEqual(stats.dropped, 5)
      assert.strictEqual(stats.sent, 0)
      const health = yield* eventually(exporter.health, (current) => !current.healthy)
      assert.match(health.message ?? "", /not connected/)
    }).pipe(Effect.scoped, Effect.timeout("20 seconds")),
  )

  it.live("holds the queue size its section sets", () =>
    Effect.gen(function* () {
      const config = Result.getOrThrow(
        NatsExporter.factory.validate({ url: "nats://127.0.0.1:1", queueSize: 50, batchSize: 10 }),
      )
      const exporter = yield* NatsExporter.factory.create(config, { ...settings, id: "nats" })
      yield* exporter.export(addedEvents(60))
      const stats = yield* exporter.stats
      assert.strictEqual(stats.dropped, 10)
      assert.strictEqual(stats.sent, 0)
    }).pipe(Effect.scoped, Effect.timeout("20 seconds")),
  )

  it.live(
    "a stream deleted while running, with streamCreate false: records refused, readiness says why, one ERROR",
    () =>
      Effect.gen(function* () {
        const lines: Array<string> = []
        const manager = yield* Effect.promise(() => jetstreamManager(observer))
        yield* Effect.promise(() => manager.streams.add({ name: "OWNED_GONE", subjects: ["owned-gone.>"] }))
        const exporter = yield* fastRetries
          .create(
            configFor({
              subjectPrefix: "owned-gone",
              stream: "OWNED_GONE",
              streamSettings: { ...NatsExporter.factory.defaultConfig.streamSettings, create: false },
            }),
            { ...settings, id: "nats" },
          )
          .pipe(Effect.provide(capturingLogger(lines)))
        yield* exporter.export(addedEvents(4))
        yield* sentAll(exporter, 4)

        yield* Effect.promise(() => manager.streams.delete("OWNED_GONE"))
        for (const event of addedEvents(6, 100)) yield* exporter.export([event])
        yield* eventually(exporter.stats, (stats) => stats.dropped === 6)
        const health = yield* exporter.health
        assert.isFalse(health.healthy)
        assert.strictEqual(
          health.message,
          "NATS stream OWNED_GONE: stream does not exist, and streamCreate is false: create it or set streamCreate to true",
        )
        const errors = lines.filter((line) => line.includes('"level":"error"'))
        assert.strictEqual(errors.length, 1)
        assert.include(errors[0], "NATS exporter cannot write")
        assert.include(errors[0], "stream does not exist")
      }).pipe(Effect.scoped),
  )

  it.live("a stream deleted while running, with streamCreate true: created again, no record lost", () =>
    Effect.gen(function* () {
      const manager = yield* Effect.promise(() => jetstreamManager(observer))
      const exporter = yield* fastRetries.create(configFor({ subjectPrefix: "recreated", stream: "RECREATED" }), {
        ...settings,
        id: "nats",
      })
      yield* exporter.export(addedEvents(4))
      yield* sentAll(exporter, 4)
      yield* Effect.promise(() => manager.streams.delete("RECREATED"))
      const later = addedEvents(6, 100)
      yield* exporter.export(later)
      yield* sentAll(exporter, 10)
      assert.strictEqual((yield* exporter.stats).dropped, 0)
      assert.deepStrictEqual(
        yield* streamIds("RECREATED"),
        later.map((event) => event.record.id),
      )
    }).pipe(Effect.scoped),
  )

  it.live("subjects taken over by another stream while running: records refused, readiness says why, one ERROR", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const manager = yield* Effect.promise(() => jetstreamManager(observer))
      const exporter = yield* fastRetries
        .create(configFor({ subjectPrefix: "taken", stream: "TAKEN_FROM" }), { ...settings, id: "nats" })
        .pipe(Effect.provide(capturingLogger(lines)))
      yield* exporter.export(addedEvents(4))
      yield* sentAll(exporter, 4)

      yield* Effect.promise(async () => {
        await manager.streams.update("TAKEN_FROM", { subjects: ["elsewhere.>"] })
        await manager.streams.add({ name: "TAKEN_BY", subjects: ["taken.>"] })
      })
      for (const event of addedEvents(6, 100)) yield* exporter.export([event])
      yield* eventually(exporter.stats, (stats) => stats.dropped === 6)
      const health = yield* exporter.health
      assert.strictEqual(health.message, "NATS publish failed: expected stream does not match")
      const errors = lines.filter((line) => line.includes('"level":"error"'))
      assert.strictEqual(errors.length, 1)
      assert.include(errors[0], "expected stream does not match")
    }).pipe(Effect.scoped),
  )
})
