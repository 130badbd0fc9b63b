import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import { remove, upsert } from "../../../src/domain/InventoryChange.ts"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import type { KnownGpu } from "../../../src/domain/KnownGpu.ts"
import * as PostgresExporter from "../../../src/exporter/postgres/PostgresExporter.ts"
import * as PostgresInventoryStore from "../../../src/exporter/postgres/PostgresInventoryStore.ts"
import type { InventoryRules } from "../../../src/processor/inventory/Inventory.ts"
import { InventoryProcessor } from "../../../src/processor/inventory/InventoryProcessor.ts"
import { hostGpus, kinds, nodeA, nodeB, podOf, read } from "../../processor/inventory/Observations.ts"
import { recordingMetrics } from "../../support/RecordingMetrics.ts"
import { createTestDatabase, type TestDatabase } from "./PostgresDatabase.ts"
import { createSettings, exporterConfig } from "./PostgresFixture.ts"

let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase()
})

afterAll(async () => {
  await database?.dispose()
})

const parameters: InventoryRules = { cluster: "prod-eu", reportIntervalMs: 3_600_000, removalGraceMs: 3_600_000 }

/** The store as the service opens it for `store: postgres`: the exporter's config, the tables migrated. */
const storeOf = (table: string, cluster = "prod-eu") =>
  PostgresInventoryStore.storeFactory.create(exporterConfig(database.connection, { table }), {
    clusterName: cluster,
    id: "postgres",
  })

const knownAt = (gpu: ReturnType<typeof hostGpus>[number], node: typeof nodeA, time: Date): KnownGpu => ({
  uuid: gpu.uuid,
  node: node.name,
  ...(node.uid === undefined ? {} : { nodeUid: node.uid }),
  ...(node.providerId === undefined ? {} : { providerId: node.providerId }),
  machine: node.name,
  pod: podOf(node),
  gpu: { ...gpu, platform: { chassisSerial: "1652823456789", slotNumber: "3", trayIndex: "7" } },
  driverVersion: "570.148.08",
  cudaVersion: "12.8",
  serialShared: true,
  firstSeen: new Date("2026-01-01T00:00:00Z"),
  lastSeen: time,
  lastReported: new Date("2026-01-02T00:00:00Z"),
})

/** A processor over the store, as one run of the service has it; events collected. */
const runOf = (table: string, cluster = "prod-eu") =>
  Effect.gen(function* () {
    const events: Array<InventoryEvent> = []
    const store = yield* storeOf(table, cluster)
    const processor = yield* InventoryProcessor.make({
      settings: { ...parameters, cluster },
      store,
      sink: (batch) => Effect.sync(() => void events.push(...batch)),
    }).pipe(Effect.provide(recordingMetrics().layer))
    return { processor, events }
  })

describe("postgres inventory store", () => {
  it.live("loads every GPU it wrote as it wrote it, and no GPU marked removed", () =>
    Effect.gen(function* () {
      const [first, second] = hostGpus("a", 2)
      if (first === undefined || second === undefined) return
      const store = yield* storeOf("roundtrip")
      const time = new Date("2026-01-03T00:00:00Z")
      const kept = knownAt(first, nodeA, time)
      const gone = knownAt(second, nodeA, time)
      yield* store.apply([upsert(kept), upsert(gone)])
      yield* store.apply([remove(gone)])
      yield* store.apply([remove(gone)])
      assert.deepStrictEqual(yield* store.load, [kept])
      const rows = yield* Effect.promise(() =>
        database.query("SELECT uuid, removed_at IS NOT NULL AS removed FROM roundtrip_current ORDER BY uuid"),
      )
      assert.deepStrictEqual(rows.rows, [
        { uuid: first.uuid, removed: false },
        { uuid: second.uuid, removed: true },
      ])
    }).pipe(Effect.scoped),
  )

  it.live("rebuilds the inventory after a restart: no added storm, and a move while down is moved", () =>
    Effect.gen(function* () {
      const gpus = hostGpus("a", 8)
      const before = yield* Effect.scoped(
        Effect.gen(function* () {
          const run = yield* runOf("restart")
          yield* run.processor.observe(read(nodeA, new Date(), gpus))
          yield* run.processor.flush
          return run.events
        }),
      )
      assert.deepStrictEqual(kinds(before), Array(8).fill("added"))

      const after = yield* Effect.scoped(
        Effect.gen(function* () {
          const run = yield* runOf("restart")
          yield* run.processor.observe(read(nodeA, new Date(), gpus.slice(1)))
          yield* run.processor.observe(read(nodeB, new Date(), gpus.slice(0, 1)))
          yield* run.processor.flush
          return run.events
        }),
      )
      assert.deepStrictEqual(kinds(after), ["moved"])
      assert.strictEqual(after[0]?.record.previousNode, nodeA.name)
      assert.strictEqual(after[0]?.record.node, nodeB.name)
      const row = yield* Effect.promise(() =>
        database.query("SELECT node FROM restart_current WHERE uuid = $1", [gpus[0]?.uuid]),
      )
      assert.deepStrictEqual(row.rows, [{ node: nodeB.name }])
    }),
  )

  it.live("shares the tables with the exporter and with another cluster: each restart announces nothing", () =>
    Effect.gen(function* () {
      // The same GPUs (same uuids) in both clusters is the hardest case for rows keyed without the cluster.
      const gpus = hostGpus("a", 4)
      const run = (cluster: string, node: typeof nodeA) =>
        Effect.scoped(
          Effect.gen(function* () {
            const exporter = yield* PostgresExporter.factory.create(
              exporterConfig(database.connection, { table: "shared" }),
              {
                ...createSettings,
                clusterName: cluster,
              },
            )
            const current = yield* runOf("shared", cluster)
            yield* current.processor.observe(read(node, new Date(), gpus))
            yield* current.processor.flush
            yield* exporter.export(current.events)
            yield* exporter.flush("10 seconds")
            return current.events
          }),
        )
      assert.deepStrictEqual(kinds(yield* run("prod-eu", nodeA)), Array(4).fill("added"))
      assert.deepStrictEqual(kinds(yield* run("prod-us", nodeB)), Array(4).fill("added"))
      assert.deepStrictEqual(kinds(yield* run("prod-eu", nodeA)), [])
      assert.deepStrictEqual(kinds(yield* run("prod-us", nodeB)), [])
      const rows = yield* Effect.promise(() =>
        database.query("SELECT cluster, node, count(*)::int AS n FROM shared_current GROUP BY 1, 2 ORDER BY 1"),
      )
      assert.deepStrictEqual(rows.rows, [
        { cluster: "prod-eu", node: nodeA.name, n: 4 },
        { cluster: "prod-us", node: nodeB.name, n: 4 },
      ])
      const history = yield* Effect.promise(() => database.query("SELECT count(*)::int AS n FROM shared"))
      assert.deepStrictEqual(history.rows, [{ n: 8 }])
    }),
  )
})
