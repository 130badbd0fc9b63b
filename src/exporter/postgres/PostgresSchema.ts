import * as Effect from "effect/Effect"
import type pg from "pg"
import type { PostgresFailure } from "./PostgresFailure.ts"
import { transaction } from "./PostgresPool.ts"
import { indexName, type PostgresTables, quotedSchema } from "./PostgresTables.ts"

/** One schema version: statements applied together, in one transaction, exactly once. */
interface Migration {
  readonly version: number
  readonly description: string
  readonly statements: (tables: PostgresTables) => ReadonlyArray<string>
}

/** The schema's versions, in order; a new version is appended, an applied one never changes. */
export const migrations: ReadonlyArray<Migration> = [
  {
    version: 1,
    description: "history of events and current state of every GPU",
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t.history} (
        id text PRIMARY KEY,
        event text NOT NULL,
        cluster text NOT NULL,
        node text NOT NULL,
        machine text NOT NULL,
        source text NOT NULL,
        chassis text NOT NULL,
        serial text NOT NULL,
        uuid text NOT NULL,
        gpu_index integer NOT NULL,
        product text,
        pci_bus_id text,
        module_id integer,
        mig_mode text,
        driver_version text,
        cuda_version text,
        provider_id text,
        serial_shared boolean NOT NULL,
        previous_node text,
        previous_machine text,
        read_time timestamptz NOT NULL,
        inserted_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE INDEX IF NOT EXISTS ${indexName(t, "uuid_time_idx")} ON ${t.history} (uuid, read_time)`,
      `CREATE INDEX IF NOT EXISTS ${indexName(t, "serial_idx")} ON ${t.history} (serial)`,
      `CREATE INDEX IF NOT EXISTS ${indexName(t, "moved_idx")} ON ${t.history} (read_time) WHERE event = 'moved'`,
      `CREATE TABLE IF NOT EXISTS ${t.current} (
        cluster text NOT NULL,
        uuid text NOT NULL,
        node text NOT NULL,
        machine text NOT NULL,
        serial text NOT NULL,
        chassis text NOT NULL,
        product text,
        provider_id text,
        driver_version text,
        cuda_version text,
        serial_shared boolean NOT NULL DEFAULT false,
        first_seen timestamptz NOT NULL,
        last_seen timestamptz NOT NULL,
        removed_at timestamptz,
        node_uid text,
        pod_namespace text,
        pod_name text,
        gpu jsonb,
        last_reported timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (cluster, uuid)
      )`,
      `CREATE INDEX IF NOT EXISTS ${indexName(t, "current_serial_idx")} ON ${t.current} (serial)`,
      `CREATE INDEX IF NOT EXISTS ${indexName(t, "current_product_idx")} ON ${t.current} (cluster, product) WHERE removed_at IS NULL`,
      `CREATE INDEX IF NOT EXISTS ${indexName(t, "current_shared_idx")} ON ${t.current} (serial) WHERE serial_shared AND removed_at IS NULL`,
    ],
  },
]

export const latestVersion = migrations.reduce((latest, migration) => Math.max(latest, migration.version), 0)

/**
 * Applies the migrations not applied yet, each in its own transaction under an advisory lock of the
 * table, so two instances starting at once apply each version exactly once. Returns the versions
 * this call applied.
 */
export const migrate = (pool: pg.Pool, tables: PostgresTables): Effect.Effect<ReadonlyArray<number>, PostgresFailure> =>
  Effect.forEach(migrations, (migration) =>
    transaction(pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`gpu-serials ${tables.display}`])
      // CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege on the database even when the schema exists.
      const schema = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [tables.schema])
      if ((schema.rowCount ?? 0) === 0) await client.query(`CREATE SCHEMA ${quotedSchema(tables)}`)
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${tables.migrations} (
          version integer PRIMARY KEY,
          description text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`,
      )
      const applied = await client.query(`SELECT 1 FROM ${tables.migrations} WHERE version = $1`, [migration.version])
      if ((applied.rowCount ?? 0) > 0) return []
      for (const statement of migration.statements(tables)) await client.query(statement)
      await client.query(`INSERT INTO ${tables.migrations} (version, description) VALUES ($1, $2)`, [
        migration.version,
        migration.description,
      ])
      return [migration.version]
    }),
  ).pipe(Effect.map((applied) => applied.flat()))

/** Fails, for good, when the history or the current-state table is missing; nothing is created. */
export const checkTables = (pool: pg.Pool, tables: PostgresTables): Effect.Effect<void, PostgresFailure> =>
  transaction(pool, (client) =>
    client.query<{ history: string | null; current: string | null }>(
      "SELECT to_regclass($1)::text AS history, to_regclass($2)::text AS current",
      [tables.history, tables.current],
    ),
  ).pipe(
    Effect.flatMap((result) => {
      const row = result.rows[0]
      const missing = [
        ...(row?.history == null ? [tables.display] : []),
        ...(row?.current == null ? [`${tables.display}_current`] : []),
      ]
      return missing.length === 0
        ? Effect.void
        : Effect.fail<PostgresFailure>({
            message: `postgres table ${missing.join(" and ")} does not exist (set POSTGRES_AUTO_MIGRATE=true to create it)`,
            retryable: false,
          })
    }),
  )

/** Makes the tables ready: migrated when `autoMigrate`, else checked. */
export const prepare = (
  pool: pg.Pool,
  tables: PostgresTables,
  autoMigrate: boolean,
): Effect.Effect<void, PostgresFailure> =>
  autoMigrate ? Effect.asVoid(migrate(pool, tables)) : checkTables(pool, tables)
