import { readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { afterAll, beforeAll } from "vitest"
import type { GpuHealth } from "../../../src/domain/GpuHealth.ts"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import * as PostgresExporter from "../../../src/exporter/postgres/PostgresExporter.ts"
import * as PostgresPool from "../../../src/exporter/postgres/PostgresPool.ts"
import { latestVersion, migrate, migrations } from "../../../src/exporter/postgres/PostgresSchema.ts"
import * as PostgresSink from "../../../src/exporter/postgres/PostgresSink.ts"
import { postgresTables } from "../../../src/exporter/postgres/PostgresTables.ts"
import { addedEvent, addedEvents } from "../InventoryEvents.ts"
import { createTestDatabase, type TestDatabase } from "./PostgresDatabase.ts"
import { createSettings, eventOf, exporterConfig } from "./PostgresFixture.ts"

let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase()
})

afterAll(async () => {
  await database?.dispose()
})

const count = async (sql: string, values: ReadonlyArray<unknown> = []) =>
  Number((await database.query<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, values)).rows[0]?.n)

const poolOf = (connection = database.connection) =>
  PostgresPool.scoped(connection, { statementTimeout: "5 seconds", maxConnections: 2, name: "test" })

const startFailure = (config: ReturnType<typeof exporterConfig>) =>
  PostgresExporter.factory.create(config, createSettings).pipe(Effect.scoped, Effect.flip)

describe("postgres exporter", () => {
  it.live("applies its migrations once: a second run, and two at once, apply nothing again", () =>
    Effect.gen(function* () {
      const pool = yield* poolOf()
      const tables = postgresTables("inventory", "twice")
      const every = migrations.map((migration) => migration.version)
      assert.deepStrictEqual(yield* migrate(pool, tables), every)
      assert.deepStrictEqual(yield* migrate(pool, tables), [])
      const racing = postgresTables("inventory", "racing")
      const outcomes = yield* Effect.all([migrate(pool, racing), migrate(pool, racing)], { concurrency: 2 })
      assert.deepStrictEqual(
        outcomes.flat().sort((a, b) => a - b),
        every,
      )
      const versions = yield* Effect.promise(() =>
        database.query("SELECT version FROM inventory.racing_migrations ORDER BY version"),
      )
      assert.deepStrictEqual(
        versions.rows,
        every.map((version) => ({ version })),
      )
      assert.strictEqual(latestVersion, 3)
    }).pipe(Effect.scoped),
  )

  it.live("writes every record field as a typed column and the GPU's current state", () =>
    Effect.gen(function* () {
      const config = exporterConfig(database.connection, { table: "typed" })
      const exporter = yield* PostgresExporter.factory.create(config, createSettings)
      const moved = eventOf(1, "moved", "2025-06-02T08:00:00.000Z", {
        node: "gpu-node-9",
        machine: "i-0new",
        previousNode: "gpu-node-1",
        previousMachine: "i-0abc",
      })
      yield* exporter.export([...addedEvents(3), moved, eventOf(2, "removed", "2025-06-03T00:00:00.000Z")])
      yield* exporter.flush("10 seconds")
      assert.strictEqual((yield* exporter.stats).sent, 5)

      const history = yield* Effect.promise(() =>
        database.query("SELECT * FROM typed WHERE id = $1", [moved.record.id]),
      )
      assert.deepInclude(history.rows[0], {
        event: "moved",
        cluster: "prod-eu",
        node: "gpu-node-9",
        machine: "i-0new",
        serial: moved.record.gpu,
        uuid: moved.record.uuid,
        gpu_index: 1,
        product: "NVIDIA H100 80GB HBM3",
        module_id: null,
        serial_shared: false,
        previous_node: "gpu-node-1",
        previous_machine: "i-0abc",
      })
      assert.strictEqual(String(history.rows[0]?.read_time?.toISOString()), "2025-06-02T08:00:00.000Z")

      const current = yield* Effect.promise(() =>
        database.query(
          "SELECT uuid, node, machine, first_seen, last_seen, removed_at FROM typed_current ORDER BY uuid",
        ),
      )
      assert.deepStrictEqual(
        current.rows.map((row) => [row.node, row.removed_at?.toISOString() ?? null]),
        [
          ["gpu-node-0", null],
          ["gpu-node-9", null],
          ["gpu-node-2", "2025-06-03T00:00:00.000Z"],
        ],
      )
      assert.strictEqual(current.rows[1]?.first_seen.toISOString(), "2025-06-01T12:00:00.000Z")
      assert.strictEqual(current.rows[1]?.last_seen.toISOString(), "2025-06-02T08:00:00.000Z")
    }).pipe(Effect.scoped),
  )

  it.live("writes a batch written twice once: no duplicate history row, the same current state", () =>
    Effect.gen(function* () {
      const pool = yield* poolOf()
      const tables = postgresTables("public", "again")
      yield* migrate(pool, tables)
      const sink = PostgresSink.make({ pool, tables })
      const batch = [...addedEvents(50), eventOf(7, "moved", "2025-06-02T00:00:00.000Z", { node: "gpu-node-70" })]
      yield* sink.write(batch)
      yield* sink.write(batch)
      assert.strictEqual(yield* Effect.promise(() => count("again")), 51)
      assert.strictEqual(yield* Effect.promise(() => count("again_current")), 50)
      assert.strictEqual(yield* Effect.promise(() => count("again_current WHERE node = $1", ["gpu-node-70"])), 1)
    }).pipe(Effect.scoped),
  )

  it.live("keeps a GPU's current state from going back to an older reading written late", () =>
    Effect.gen(function* () {
      const pool = yield* poolOf()
      const tables = postgresTables("public", "late")
      yield* migrate(pool, tables)
      const sink = PostgresSink.make({ pool, tables })
      yield* sink.write([eventOf(1, "moved", "2025-06-05T00:00:00.000Z", { node: "gpu-node-new" })])
      yield* sink.write([addedEvent(1)])
      const rows = yield* Effect.promise(() => database.query("SELECT node FROM late_current"))
      assert.deepStrictEqual(rows.rows, [{ node: "gpu-node-new" }])
      assert.strictEqual(yield* Effect.promise(() => count("late")), 2)
    }).pipe(Effect.scoped),
  )

  it.live("writes each event's health, the state before a health change, and the GPU's last health", () =>
    Effect.gen(function* () {
      const config = exporterConfig(database.connection, { table: "healthy" })
      const exporter = yield* PostgresExporter.factory.create(config, createSettings)
      const pending: GpuHealth = {
        state: "degraded",
        reasons: ["row-remap-pending"],
        rmaEligible: false,
        remappedRows: { correctable: 0, uncorrectable: 1, pending: true, failure: false },
        vbios: "96.00.99.00.01",
      }
      const withHealth = (event: InventoryEvent, health: GpuHealth, previous?: GpuHealth["state"]) => ({
        ...event,
        record: {
          ...event.record,
          health,
          ...(previous === undefined ? {} : { previousHealthState: previous }),
        },
      })
      const added = withHealth(addedEvent(4), { state: "ok", reasons: [], rmaEligible: false })
      const turned = withHealth(eventOf(4, "health", "2025-06-02T08:00:00.000Z"), pending, "ok")
      yield* exporter.export([added, turned, addedEvent(5)])
      yield* exporter.flush("10 seconds")

      const history = yield* Effect.promise(() =>
        database.query("SELECT event, health_state, previous_health_state, health FROM healthy ORDER BY read_time, id"),
      )
      assert.deepStrictEqual(history.rows, [
        { event: "added", health_state: "ok", previous_health_state: null, health: added.record.health },
        { event: "added", health_state: null, previous_health_state: null, health: null },
        { event: "health", health_state: "degraded", previous_health_state: "ok", health: pending },
      ])
      const current = yield* Effect.promise(() =>
        database.query("SELECT uuid, health_state, health FROM healthy_current ORDER BY uuid"),
      )
      assert.deepStrictEqual(
        current.rows.map((row) => [row.health_state, row.health]),
        [
          ["degraded", pending],
          [null, null],
        ],
      )
    }).pipe(Effect.scoped),
  )

  it.live("writes a move across clusters with the cluster it left, and marks the GPU removed there", () =>
    Effect.gen(function* () {
      const config = exporterConfig(database.connection, { table: "crossed" })
      const exporter = yield* PostgresExporter.factory.create(config, createSettings)
      const before = { ...addedEvent(3), record: { ...addedEvent(3).record, cluster: "prod-us" } }
      const moved = eventOf(3, "moved", "2025-06-02T08:00:00.000Z", {
        cluster: "prod-eu",
        node: "gpu-node-9",
        machine: "i-0new",
        previousCluster: "prod-us",
        previousNode: "gpu-node-3",
        previousMachine: "i-0abc",
      })
      const withMig = {
        ...addedEvent(4),
        record: {
          ...addedEvent(4).record,
          migMode: "Enabled",
          migDevices: [{ uuid: "MIG-0a1b2c3d-0000-5555-6666-777777777777", profile: "1g.10gb" }],
        },
      }
      yield* exporter.export([before, addedEvent(5)])
      yield* exporter.flush("10 seconds")
      yield* exporter.export([moved, withMig])
      yield* exporter.flush("10 seconds")

      const history = yield* Effect.promise(() =>
        database.query(
          "SELECT event, cluster, node, previous_cluster, previous_node, mig_devices FROM crossed ORDER BY id",
        ),
      )
      assert.deepStrictEqual(history.rows, [
        {
          event: "added",
          cluster: "prod-us",
          node: "gpu-node-3",
          previous_cluster: null,
          previous_node: null,
          mig_devices: null,
        },
        {
          event: "moved",
          cluster: "prod-eu",
          node: "gpu-node-9",
          previous_cluster: "prod-us",
          previous_node: "gpu-node-3",
          mig_devices: null,
        },
        {
          event: "added",
          cluster: "prod-eu",
          node: "gpu-node-4",
          previous_cluster: null,
          previous_node: null,
          mig_devices: [{ uuid: "MIG-0a1b2c3d-0000-5555-6666-777777777777", profile: "1g.10gb" }],
        },
        {
          event: "added",
          cluster: "prod-eu",
          node: "gpu-node-5",
          previous_cluster: null,
          previous_node: null,
          mig_devices: null,
        },
      ])
      const current = yield* Effect.promise(() =>
        database.query("SELECT cluster, node, removed_at FROM crossed_current WHERE uuid = $1 ORDER BY cluster", [
          moved.record.uuid,
        ]),
      )
      assert.deepStrictEqual(
        current.rows.map((row) => [row.cluster, row.node, row.removed_at?.toISOString() ?? null]),
        [
          ["prod-eu", "gpu-node-9", null],
          ["prod-us", "gpu-node-3", "2025-06-02T08:00:00.000Z"],
        ],
      )
      assert.strictEqual(yield* Effect.promise(() => count("crossed_current WHERE removed_at IS NULL")), 3)
    }).pipe(Effect.scoped),
  )

  it.live(
    "refuses a table of schema version 2 when auto-migrate is off, naming previous_cluster; the migration to version 3 keeps its rows",
    () =>
      Effect.gen(function* () {
        const pool = yield* poolOf()
        const tables = postgresTables("public", "second")
        const applied = migrations.filter((migration) => migration.version <= 2)
        yield* Effect.promise(async () => {
          for (const migration of applied)
            for (const statement of migration.statements(tables)) await database.query(statement)
          await database.query(
            "CREATE TABLE second_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
          )
          for (const migration of applied) {
            await database.query("INSERT INTO second_migrations (version, description) VALUES ($1, $2)", [
              migration.version,
              migration.description,
            ])
          }
          // A row as gpu-serials of schema version 2 wrote it.
          await database.query(
            `INSERT INTO second (id, event, cluster, node, machine, source, chassis, serial, uuid, gpu_index, serial_shared,
              previous_node, previous_machine, read_time, health_state)
            VALUES ('v2-row', 'moved', 'prod-eu', 'gpu-node-2', 'i-0new', 'gpu-operator/p', '', '01650000000001',
              'GPU-00000001-1111-2222-3333-444444444444', 1, false, 'gpu-node-1', 'i-0abc', '2025-05-01T00:00:00Z', 'ok')`,
          )
        })

        const refused = yield* startFailure(
          exporterConfig(database.connection, { table: "second", autoMigrate: false }),
        )
        assert.strictEqual(
          refused.message,
          "postgres public.second: postgres table lacks column public.second.previous_cluster, public.second.mig_devices of schema version 3 (set POSTGRES_AUTO_MIGRATE=true once to migrate it)",
        )

        assert.deepStrictEqual(yield* migrate(pool, tables), [3])
        const kept = yield* Effect.promise(() =>
          database.query("SELECT id, node, previous_node, health_state, previous_cluster, mig_devices FROM second"),
        )
        assert.deepStrictEqual(kept.rows, [
          {
            id: "v2-row",
            node: "gpu-node-2",
            previous_node: "gpu-node-1",
            health_state: "ok",
            previous_cluster: null,
            mig_devices: null,
          },
        ])
        const exporter = yield* PostgresExporter.factory.create(
          exporterConfig(database.connection, { table: "second", autoMigrate: false }),
          createSettings,
        )
        const moved = eventOf(1, "moved", "2025-06-02T08:00:00.000Z", {
          node: "gpu-node-9",
          previousCluster: "prod-us",
          previousNode: "gpu-node-7",
        })
        yield* exporter.export([moved])
        yield* exporter.flush("10 seconds")
        assert.strictEqual(
          yield* Effect.promise(() =>
            count("second WHERE id = $1 AND previous_cluster = 'prod-us'", [moved.record.id]),
          ),
          1,
        )
      }).pipe(Effect.scoped),
  )

  it("documents version 3's statement for the default table as the migration runs it", () => {
    const page = readFileSync(new URL("../../../docs/exporters/postgres.md", import.meta.url), "utf8")
    const third = migrations.find((migration) => migration.version === 3)
    const statements = third?.statements(postgresTables("public", "gpu_serials")) ?? []
    assert.isNotEmpty(statements)
    for (const statement of statements) assert.include(page, `\n${statement};\n`)
  })

  it.live(
    "refuses a table of schema version 1 when auto-migrate is off, naming the missing columns; auto-migrate adds them",
    () =>
      Effect.gen(function* () {
        const pool = yield* poolOf()
        const tables = postgresTables("public", "older")
        const [first] = migrations
        if (first === undefined) return yield* Effect.die(new Error("no migrations"))
        for (const statement of first.statements(tables)) yield* Effect.promise(() => database.query(statement))

        const refused = yield* startFailure(exporterConfig(database.connection, { table: "older", autoMigrate: false }))
        assert.strictEqual(
          refused.message,
          "postgres public.older: postgres table lacks column public.older.health_state, public.older.previous_health_state, public.older.health, public.older.previous_cluster, public.older.mig_devices, public.older_current.health_state, public.older_current.health of schema version 3 (set POSTGRES_AUTO_MIGRATE=true once to migrate it)",
        )

        // As gpu-serials of schema version 1 left it: the tables, and version 1 recorded as applied.
        yield* Effect.promise(async () => {
          await database.query(
            "CREATE TABLE older_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
          )
          await database.query("INSERT INTO older_migrations (version, description) VALUES (1, $1)", [
            first.description,
          ])
        })
        assert.deepStrictEqual(yield* migrate(pool, tables), [2, 3])
        const exporter = yield* PostgresExporter.factory.create(
          exporterConfig(database.connection, { table: "older", autoMigrate: false }),
          createSettings,
        )
        yield* exporter.export([addedEvent(1)])
        yield* exporter.flush("10 seconds")
        assert.strictEqual(yield* Effect.promise(() => count("older WHERE health IS NULL")), 1)
      }).pipe(Effect.scoped),
  )

  it.live("refuses to start without its tables when auto-migrate is off, and says how to create them", () =>
    Effect.gen(function* () {
      const error = yield* startFailure(exporterConfig(database.connection, { table: "absent", autoMigrate: false }))
      assert.strictEqual(
        error.message,
        "postgres public.absent: postgres table public.absent and public.absent_current does not exist (set POSTGRES_AUTO_MIGRATE=true to create it)",
      )
    }),
  )

  it.live("fails the start at once, with the SQLSTATE, when the server refuses the login or the database", () =>
    Effect.gen(function* () {
      // Trust authentication accepts any password on 127.0.0.1: a role without LOGIN is refused all the same.
      const role = yield* Effect.promise(() => database.createRole("nologin", "NOLOGIN"))
      const refused = yield* startFailure(
        exporterConfig({ ...database.connection, user: role, password: "not-this-one" }),
      )
      assert.match(refused.message, /not permitted to log in \(SQLSTATE 28000\)$/)
      assert.notInclude(refused.message, "not-this-one")

      const missing = yield* startFailure(exporterConfig({ ...database.connection, database: `${database.name}_x` }))
      assert.match(missing.message, /does not exist \(SQLSTATE 3D000\)$/)
    }),
  )

  it.live("connects with a password holding spaces, quotes and '@'", () =>
    Effect.gen(function* () {
      const password = `p@ss w'o"rd:/?#%`
      const role = yield* Effect.promise(() =>
        database.createRole("quoted", `LOGIN PASSWORD '${password.replaceAll("'", "''")}'`),
      )
      yield* Effect.promise(() => database.query(`GRANT CREATE ON SCHEMA public TO ${role}`))
      const config = exporterConfig({ ...database.connection, user: role, password }, { table: "quoted" })
      assert.strictEqual(
        PostgresPool.poolConfig(config.connection, { statementTimeout: 1000, maxConnections: 1 }).password,
        password,
      )
      const outcome = yield* Effect.exit(
        Effect.gen(function* () {
          const exporter = yield* PostgresExporter.factory.create(config, createSettings)
          yield* exporter.export(addedEvents(2))
          yield* exporter.flush("10 seconds")
          return (yield* exporter.stats).sent
        }).pipe(Effect.scoped),
      )
      assert.deepStrictEqual(outcome, Exit.succeed(2))
    }),
  )

  it.live("names the session gpu-serials on the server", () =>
    Effect.gen(function* () {
      const pool = yield* poolOf()
      const client = yield* Effect.promise(() => pool.connect())
      const name = yield* Effect.promise(() => client.query("SHOW application_name"))
      const timeout = yield* Effect.promise(() => client.query("SHOW statement_timeout"))
      client.release()
      assert.deepStrictEqual(name.rows, [{ application_name: "gpu-serials" }])
      assert.deepStrictEqual(timeout.rows, [{ statement_timeout: "5s" }])
    }).pipe(Effect.scoped),
  )
})
