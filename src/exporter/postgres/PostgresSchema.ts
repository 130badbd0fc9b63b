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
  {
    version: 2,
    description: "health of every event and the last health of every GPU",
    statements: (t) => [
      `ALTER TABLE ${t.history} ADD COLUMN IF NOT EXISTS health_state text,
        ADD COLUMN IF NOT EXISTS previous_health_state text, ADD COLUMN IF NOT EXISTS health jsonb`,
      `ALTER TABLE ${t.current} ADD COLUMN IF NOT EXISTS health_state text, ADD COLUMN IF NOT EXISTS health jsonb`,
      `CREATE INDEX IF NOT EXISTS ${indexName(t, "health_idx")} ON ${t.history} (uuid, read_time) WHERE event = 'health'`,
      `CREATE INDEX IF NOT EXISTS ${indexName(t, "current_health_idx")} ON ${t.current} (cluster, health_state) WHERE removed_at IS NULL AND health_state <> 'ok'`,
    ],
  },
  {
    version: 3,
    description: "the cluster a GPU moved from and the MIG devices of every event",
    statements: (t) => [
      `ALTER TABLE ${t.history} ADD COLUMN IF NOT EXISTS previous_cluster text, ADD COLUMN IF NOT EXISTS mig_devices jsonb`,
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

/** The columns of each table a later schema version added, which an unmigrated table lacks. */
const columnsOfLaterVersions = {
  history: ["health_state", "previous_health_state", "health", "previous_cluster", "mig_devices"],
  current: ["health_state", "health"],
} as const

/**
 * Fails, for good, when the history or the current-state table is missing, or lacks a column a later
 * schema version added (a table of an older gpu-serials); nothing is created or altered.
 */
export const checkTables = (pool: pg.Pool, tables: PostgresTables): Effect.Effect<void, PostgresFailure> =>
  transaction(pool, async (client) => {
    const found = await client.query<{ history: string | null; current: string | null }>(
      "SELECT to_regclass($1)::text AS history, to_regclass($2)::text AS current",
      [tables.history, tables.current],
    )
    const columns = await client.query<{ relation: string; name: string }>(
      `SELECT CASE WHEN attrelid = to_regclass($1) THEN 'history' ELSE 'current' END AS relation, attname AS name
        FROM pg_attribute WHERE attrelid IN (to_regclass($1), to_regclass($2)) AND attnum > 0 AND NOT attisdropped`,
      [tables.history, tables.current],
    )
    return { tables: found.rows[0], columns: columns.rows }
  }).pipe(
    Effect.flatMap((found) => {
      const missing = [
        ...(found.tables?.history == null ? [tables.display] : []),
        ...(found.tables?.current == null ? [`${tables.display}_current`] : []),
      ]
      if (missing.length > 0) {
        return Effect.fail<PostgresFailure>({
          message: `postgres table ${missing.join(" and ")} does not exist (set POSTGRES_AUTO_MIGRATE=true to create it)`,
          retryable: false,
        })
      }
      const has = new Set(found.columns.map((column) => `${column.relation}.${column.name}`))
      const lacking = [
        ...columnsOfLaterVersions.history
          .filter((name) => !has.has(`history.${name}`))
          .map((name) => `${tables.display}.${name}`),
        ...columnsOfLaterVersions.current
          .filter((name) => !has.has(`current.${name}`))
          .map((name) => `${tables.display}_current.${name}`),
      ]
      return lacking.length === 0
        ? Effect.void
        : Effect.fail<PostgresFailure>({
            message: `postgres table lacks column ${lacking.join(", ")} of schema version ${latestVersion} (set POSTGRES_AUTO_MIGRATE=true once to migrate it)`,
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
