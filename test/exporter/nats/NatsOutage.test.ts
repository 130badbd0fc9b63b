import { assert, describe, it } from "@effect/vitest"
import { jetstreamManager } from "@nats-io/jetstream"
import { connect, nanos } from "@nats-io/transport-node"
import { Duration, Effect, Fiber } from "effect"
import { afterEach } from "vitest"
import { defaultQueueSettings } from "../../../src/exporter/exporterhelper/QueueSettings.ts"
import type { NatsExporterConfig } from "../../../src/exporter/nats/NatsConfig.ts"
import * as NatsExporter from "../../../src/exporter/nats/NatsExporter.ts"
import type { Exporter } from "../../../src/pipeline/Exporter.ts"
import { addedEvents } from "../InventoryEvents.ts"
import { type NatsServer, startNatsServer } from "./NatsServer.ts"
import { streamRecordIds } from "./StreamRecordIds.ts"

let server: NatsServer | undefined

afterEach(async () => {
  await server?.dispose()
  server = undefined
})

/**
 * Retries set explicitly, so the outcome does not hang on the queue's defaults: short backoffs, bounded
 * by 2 minutes.
 */
const outageFactory = NatsExporter.makeFactory({
  queue: {
    ...defaultQueueSettings,
    batchSize: 50,
    retry: {
      ...defaultQueueSettings.retry,
      initialInterval: Duration.millis(200),
      maxInterval: Duration.seconds(2),
      maxAttempts: 0,
      maxElapsed: Duration.minutes(2),
    },
  },
})

const settings = { id: "nats", clusterName: "prod-eu", serviceVersion: "0.1.0" }

/** How many events the exporter is handed, one every 100 ms, around the outage. */
const total = 200

/** The record id of every message in `stream`, read on a connection of its own. */
const storedIds = (url: string, stream: string) =>
  Effect.promise(async () => {
    const connection = await connect({ servers: url })
    try {
      return await streamRecordIds(connection, stream)
    } finally {
      await connection.close()
    }
  })

const settled = (exporter: Exporter) =>
  Effect.gen(function* () {
    for (;;) {
      const stats = yield* exporter.stats
      if (stats.queued === 0 && stats.sent + stats.dropped >= total) return stats
      yield* Effect.sleep("100 millis")
    }
  })

/**
 * Hands `total` events to the exporter, one every 100 ms, while the server is killed with SIGKILL 2 s
 * in, kept down 15 s, and started again on the same port and store; then waits for the exporter to
 * settle and reads the stream.
 */
const publishThroughOutage = (live: NatsServer, config: NatsExporterConfig, stream: string) =>
  Effect.gen(function* () {
    const exporter = yield* outageFactory.create(config, settings)
    const events = addedEvents(total)
    const producer = yield* Effect.forEach(
      events,
      (event) => exporter.export([event]).pipe(Effect.andThen(Effect.sleep("100 millis"))),
      { discard: true },
    ).pipe(Effect.forkScoped)
    yield* Effect.sleep("2 seconds")
    yield* Effect.promise(() => live.kill())
    yield* Effect.sleep("15 seconds")
    const during = yield* exporter.stats
    yield* Effect.promise(() => live.start())
    yield* Fiber.join(producer)
    const stats = yield* settled(exporter).pipe(Effect.timeout("60 seconds"))
    const ids = yield* storedIds(live.url, stream)
    return { events, during, stats, ids }
  }).pipe(Effect.scoped)

const expectEachOnce = (ids: ReadonlyArray<string>, events: ReturnType<typeof addedEvents>) => {
  assert.strictEqual(ids.length, events.length, "messages in the stream")
  assert.strictEqual(new Set(ids).size, ids.length, "distinct Nats-Msg-Id")
  assert.deepStrictEqual([...ids].sort(), events.map((event) => event.record.id).sort())
}

describe("nats exporter through a 15 s server outage (kill -9, restart on the same port and store)", () => {
  it.live(
    "JetStream: every record stored exactly once, none dropped",
    () =>
      Effect.gen(function* () {
        const live = yield* Effect.promise(() => startNatsServer())
        server = live
        const config = {
          ...NatsExporter.factory.defaultConfig,
          servers: [live.url],
          subjectPrefix: "js-outage",
          stream: "JS_OUTAGE",
        }
        const { events, during, stats, ids } = yield* publishThroughOutage(live, config, "JS_OUTAGE")
        assert.isBelow(during.sent, total, "the outage held records back")
        assert.isAbove(during.queued, 0, "records waited in the buffer during the outage")
        assert.strictEqual(stats.dropped, 0)
        assert.strictEqual(stats.sent, total)
        expectEachOnce(ids, events)
      }),
    { timeout: 120_000 },
  )

  it.live(
    "core NATS into a stream that captures its subjects: every record stored exactly once, none dropped",
    () =>
      Effect.gen(function* () {
        const live = yield* Effect.promise(() => startNatsServer())
        server = live
        // The stream is the operator's: the exporter publishes on core NATS and the stream de-duplicates.
        yield* Effect.promise(async () => {
          const connection = await connect({ servers: live.url })
          const manager = await jetstreamManager(connection)
          await manager.streams.add({
            name: "CORE_OUTAGE",
            subjects: ["core-outage.>"],
            duplicate_window: nanos(120_000),
          })
          await connection.close()
        })
        const config = { ...NatsExporter.factory.defaultConfig, servers: [live.url], subjectPrefix: "core-outage" }
        const { events, during, stats, ids } = yield* publishThroughOutage(live, config, "CORE_OUTAGE")
        assert.isBelow(during.sent, total, "the outage held records back")
        assert.strictEqual(stats.dropped, 0)
        assert.strictEqual(stats.sent, total)
        expectEachOnce(ids, events)
      }),
    { timeout: 120_000 },
  )
})
