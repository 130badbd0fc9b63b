import { assert, describe, it } from "@effect/vitest"
import {
  DiscardPolicy,
  type JetStreamManager,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream"
import { connect, type NatsConnection, nanos } from "@nats-io/transport-node"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import type { NatsStreamSettings } from "../../../src/exporter/nats/NatsConfig.ts"
import * as NatsExporter from "../../../src/exporter/nats/NatsExporter.ts"
import { ensureStream } from "../../../src/exporter/nats/NatsStream.ts"
import { type NatsServer, startNatsServer } from "./NatsServer.ts"

let server: NatsServer
let connection: NatsConnection
let manager: JetStreamManager

beforeAll(async () => {
  server = await startNatsServer()
  connection = await connect({ servers: server.url })
  manager = await jetstreamManager(connection)
})

afterAll(async () => {
  await connection?.close()
  await server?.dispose()
})

const defaults: NatsStreamSettings = {
  create: true,
  duplicateWindowMs: 120_000,
  retention: "limits",
  maxAgeMs: 0,
  maxBytes: 0,
}

const configOf = (name: string) => Effect.promise(() => manager.streams.info(name).then((info) => info.config))

describe("nats stream set-up", () => {
  it.live("creates a missing stream with the configured duplicate window, retention, max age and max bytes", () =>
    Effect.gen(function* () {
      yield* ensureStream(manager, "CREATED", "made", {
        create: true,
        duplicateWindowMs: 30_000,
        retention: "interest",
        maxAgeMs: 3_600_000,
        maxBytes: 64 * 1024 * 1024,
      })
      const config = yield* configOf("CREATED")
      assert.deepStrictEqual(config.subjects, ["made.>"])
      assert.strictEqual(config.duplicate_window, nanos(30_000))
      assert.strictEqual(config.retention, RetentionPolicy.Interest)
      assert.strictEqual(config.max_age, nanos(3_600_000))
      assert.strictEqual(config.storage, StorageType.File)
      assert.strictEqual(config.max_bytes, 64 * 1024 * 1024)
      assert.strictEqual(config.discard, DiscardPolicy.Old)
    }),
  )

  it.live("bounds the stream it creates by default: 7 days and 1 GiB, the oldest messages discarded", () =>
    Effect.gen(function* () {
      yield* ensureStream(manager, "BOUNDED", "bounded", NatsExporter.factory.defaultConfig.streamSettings)
      const config = yield* configOf("BOUNDED")
      assert.strictEqual(config.max_age, nanos(7 * 24 * 3_600_000))
      assert.strictEqual(config.max_bytes, 1024 * 1024 * 1024)
      assert.strictEqual(config.discard, DiscardPolicy.Old)
    }),
  )

  it.live("updates an existing stream's subjects, window and age, and keeps its retention", () =>
    Effect.gen(function* () {
      yield* Effect.promise(() =>
        manager.streams.add({
          name: "EXISTING",
          subjects: ["other.>"],
          retention: RetentionPolicy.Workqueue,
          duplicate_window: nanos(60_000),
          max_age: nanos(86_400_000),
        }),
      )
      yield* ensureStream(manager, "EXISTING", "mine", { ...defaults, duplicateWindowMs: 10_000, maxAgeMs: 600_000 })
      const config = yield* configOf("EXISTING")
      assert.deepStrictEqual(config.subjects, ["other.>", "mine.>"])
      assert.strictEqual(config.duplicate_window, nanos(10_000))
      assert.strictEqual(config.max_age, nanos(600_000))
      assert.strictEqual(config.retention, RetentionPolicy.Workqueue)
      yield* ensureStream(manager, "EXISTING", "mine", { ...defaults, duplicateWindowMs: 10_000, maxAgeMs: 0 })
      assert.strictEqual((yield* configOf("EXISTING")).max_age, 0)
    }),
  )

  it.live("with streamCreate false, fails on a missing stream and leaves an existing one untouched", () =>
    Effect.gen(function* () {
      const missing = yield* Effect.flip(ensureStream(manager, "ABSENT", "none", { ...defaults, create: false }))
      assert.strictEqual(missing._tag, "NatsStreamError")
      assert.match(missing.message, /does not exist, and streamCreate is false/)
      const names = yield* Effect.promise(() => manager.streams.names().next())
      assert.notInclude(names, "ABSENT")
      yield* Effect.promise(() =>
        manager.streams.add({ name: "OWNED", subjects: ["owned.>"], duplicate_window: nanos(60_000) }),
      )
      yield* ensureStream(manager, "OWNED", "mine", { ...defaults, create: false, maxAgeMs: 600_000 })
      const config = yield* configOf("OWNED")
      assert.deepStrictEqual(config.subjects, ["owned.>"])
      assert.strictEqual(config.duplicate_window, nanos(60_000))
      assert.strictEqual(config.max_age, 0)
    }),
  )
})
