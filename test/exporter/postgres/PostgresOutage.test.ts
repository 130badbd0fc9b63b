import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import * as PostgresExporter from "../../../src/exporter/postgres/PostgresExporter.ts"
import * as PostgresPool from "../../../src/exporter/postgres/PostgresPool.ts"
import { migrate } from "../../../src/exporter/postgres/PostgresSchema.ts"
import * as PostgresSink from "../../../src/exporter/postgres/PostgresSink.ts"
import { postgresTables } from "../../../src/exporter/postgres/PostgresTables.ts"
import { addedEvents } from "../InventoryEvents.ts"
import { type CuttingProxy, startCuttingProxy } from "./CuttingProxy.ts"
import { createTestDatabase, type TestDatabase } from "./PostgresDatabase.ts"
import { createSettings, eventOf, exporterConfig } from "./PostgresFixture.ts"

let database: TestDatabase
let proxy: CuttingProxy

beforeAll(async () => {
  database = await createTestDatabase()
  proxy = await startCuttingProxy({ host: "127.0.0.1", port: 5432 })
})

afterAll(async () => {
  await proxy?.close()
  await database?.dispose()
})

const throughProxy = () => ({ ...database.connection, port: proxy.port })

const historyIds = (table: string) =>
  Effect.promise(async () => (await database.query<{ id: string }>(`SELECT id FROM ${table} ORDER BY id`)).rows)

describe("postgres exporter when the connection breaks", () => {
  it.live("rolls a batch cut in the middle back, as a retryable failure, and writes it whole on the next attempt", () =>
    Effect.gen(function* () {
      const pool = yield* PostgresPool.scoped(throughProxy(), {
        statementTimeout: "5 seconds",
        maxConnections: 1,
        name: "test",
      })
      const tables = postgresTables("public", "cut_midway")
      yield* migrate(pool, tables)
      const sink = PostgresSink.make({ pool, tables })
      const batch = addedEvents(40)

      // The history rows are inserted, then the connection breaks before the current state is written.
      proxy.cutOn('cut_midway_current"', "before")
      const failure = yield* Effect.flip(sink.write(batch))
      assert.isTrue(failure.retryable)
      assert.deepStrictEqual(yield* historyIds("cut_midway"), [])

      yield* sink.write(batch)
      assert.strictEqual((yield* historyIds("cut_midway")).length, 40)
      const current = yield* Effect.promise(() => database.query("SELECT count(*)::int AS n FROM cut_midway_current"))
      assert.deepStrictEqual(current.rows, [{ n: 40 }])
    }).pipe(Effect.scoped),
  )

  it.live("loses nothing and duplicates nothing when commits go unanswered and batches are retried", () =>
    Effect.gen(function* () {
      const exporter = yield* PostgresExporter.factory.create(
        exporterConfig(throughProxy(), { table: "outage" }),
        createSettings,
      )
      const events = [...addedEvents(300), eventOf(5, "moved", "2025-06-02T00:00:00.000Z", { node: "gpu-node-500" })]
      const cutsBefore = proxy.cuts()
      // The server commits the first batch but the client never hears it; a later batch breaks midway.
      proxy.cutOn("COMMIT", "after")
      yield* exporter.export(events.slice(0, 100))
      yield* exporter.flush("30 seconds")
      proxy.cutOn('outage_current"', "before")
      yield* exporter.export(events.slice(100))
      yield* exporter.flush("30 seconds")

      assert.strictEqual(proxy.cuts() - cutsBefore, 2)
      const stats = yield* exporter.stats
      assert.strictEqual(stats.sent, events.length)
      assert.strictEqual(stats.dropped, 0)
      const ids = (yield* historyIds("outage")).map((row) => row.id)
      assert.deepStrictEqual(ids, events.map((event) => event.record.id).sort())
      const moved = yield* Effect.promise(() =>
        database.query("SELECT node FROM outage_current WHERE uuid = $1", [events[5]?.record.uuid]),
      )
      assert.deepStrictEqual(moved.rows, [{ node: "gpu-node-500" }])
    }).pipe(Effect.scoped),
  )
})
