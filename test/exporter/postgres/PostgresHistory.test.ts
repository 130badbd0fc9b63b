import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import * as PostgresExporter from "../../../src/exporter/postgres/PostgresExporter.ts"
import { historyReader } from "../../../src/exporter/postgres/PostgresHistory.ts"
import { createTestDatabase, type TestDatabase } from "./PostgresDatabase.ts"
import { createSettings, eventOf, exporterConfig } from "./PostgresFixture.ts"

let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase()
}, 60_000)

afterAll(async () => {
  await database.dispose()
})

describe("the fleet API's history from postgres", () => {
  it.live("reads a GPU's added, moved, removed and health rows of its cluster, newest first", () =>
    Effect.gen(function* () {
      const config = exporterConfig(database.connection, { table: "history_read" })
      const added = eventOf(1, "added", "2025-06-01T08:00:00.000Z")
      const observed = eventOf(1, "observed", "2025-06-01T09:00:00.000Z")
      const moved = eventOf(1, "moved", "2025-06-02T08:00:00.000Z", {
        node: "gpu-node-9",
        machine: "i-0new",
        previousCluster: "prod-us",
        previousNode: "gpu-node-1",
        previousMachine: "i-0abc",
      })
      const removed = eventOf(1, "removed", "2025-06-03T08:00:00.000Z", { node: "gpu-node-9", machine: "i-0new" })
      const other = eventOf(2, "added", "2025-06-01T08:00:00.000Z")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const exporter = yield* PostgresExporter.factory.create(config, createSettings)
          yield* exporter.export([added, observed, moved, removed, other])
          yield* exporter.flush("10 seconds")
        }),
      )
      const read = yield* historyReader(config, createSettings.clusterName)
      const entries = yield* read(added.record.uuid, 10)
      assert.deepStrictEqual(
        entries?.map((entry) => [entry.event, entry.node, entry.time]),
        [
          ["removed", "gpu-node-9", "2025-06-03T08:00:00.000Z"],
          ["moved", "gpu-node-9", "2025-06-02T08:00:00.000Z"],
          ["added", added.record.node, "2025-06-01T08:00:00.000Z"],
        ],
      )
      assert.deepInclude(entries?.[1], {
        previousCluster: "prod-us",
        previousNode: "gpu-node-1",
        previousMachine: "i-0abc",
        machine: "i-0new",
      })
      assert.notProperty(entries?.[0], "previousCluster")
      assert.strictEqual((yield* read(added.record.uuid, 1))?.length, 1)
      assert.isUndefined(yield* read("GPU-unknown", 10))
      const elsewhere = yield* historyReader(config, "another-cluster")
      assert.isUndefined(yield* elsewhere(added.record.uuid, 10))
    }).pipe(Effect.scoped),
  )

  it.live("reads a GPU's rows of every cluster on a hub, each entry naming its cluster", () =>
    Effect.gen(function* () {
      const config = exporterConfig(database.connection, { table: "history_hub" })
      const added = eventOf(1, "added", "2025-06-01T08:00:00.000Z", { cluster: "prod-us" })
      const moved = eventOf(1, "moved", "2025-06-02T08:00:00.000Z", {
        cluster: "prod-eu",
        node: "gpu-node-9",
        machine: "i-0new",
        previousCluster: "prod-us",
        previousNode: "gpu-node-1",
        previousMachine: "i-0abc",
      })
      yield* Effect.scoped(
        Effect.gen(function* () {
          const exporter = yield* PostgresExporter.factory.create(config, createSettings)
          yield* exporter.export([added, moved])
          yield* exporter.flush("10 seconds")
        }),
      )
      const hub = yield* historyReader(config, undefined)
      const entries = yield* hub(added.record.uuid, 10)
      assert.deepStrictEqual(
        entries?.map((entry) => [entry.event, entry.cluster, entry.previousCluster]),
        [
          ["moved", "prod-eu", "prod-us"],
          ["added", "prod-us", undefined],
        ],
      )
      const oneCluster = yield* historyReader(config, "prod-eu")
      const ofOne = yield* oneCluster(added.record.uuid, 10)
      assert.deepStrictEqual(
        ofOne?.map((entry) => entry.event),
        ["moved"],
      )
      assert.notProperty(ofOne?.[0], "cluster")
    }).pipe(Effect.scoped),
  )

  it.live("fails a read, with a message and no password, when the server refuses it", () =>
    Effect.gen(function* () {
      const config = exporterConfig({ ...database.connection, database: "no_such_database" }, { table: "history_read" })
      const read = yield* historyReader(config, createSettings.clusterName)
      const failure = yield* Effect.flip(read("GPU-x", 10))
      assert.isString(failure.message)
    }).pipe(Effect.scoped),
  )
})
