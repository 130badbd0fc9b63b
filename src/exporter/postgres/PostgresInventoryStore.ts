import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type pg from "pg"
import type { ComponentStartError } from "../../component/ComponentStartError.ts"
import type { Gpu } from "../../domain/Gpu.ts"
import type { InventoryChange } from "../../domain/InventoryChange.ts"
import { chassisOf, type KnownGpu } from "../../domain/KnownGpu.ts"
import { StoredGpu, StoredHealth } from "../../domain/StoredGpu.ts"
import {
  exporterKeptStore,
  InventoryStore,
  InventoryStoreError,
  type StoreFactory,
} from "../../pipeline/InventoryStore.ts"
import type { PostgresExporterConfig } from "./PostgresConfig.ts"
import { openPool } from "./PostgresExporter.ts"
import type { PostgresFailure } from "./PostgresFailure.ts"
import { transaction } from "./PostgresPool.ts"
import { type Cell, currentColumns, healthJson, transpose, unnestOf } from "./PostgresRows.ts"
import type { PostgresTables } from "./PostgresTables.ts"

const kind = "postgres"

const decodeGpu = Schema.decodeUnknownOption(StoredGpu)
const decodeHealth = Schema.decodeUnknownOption(StoredHealth)

/** A current-state row as the store reads it back. */
interface CurrentRow {
  readonly uuid: string
  readonly node: string
  readonly machine: string
  readonly provider_id: string | null
  readonly driver_version: string | null
  readonly cuda_version: string | null
  readonly serial_shared: boolean
  readonly first_seen: Date
  readonly last_seen: Date
  readonly node_uid: string | null
  readonly pod_namespace: string
  readonly pod_name: string
  readonly gpu: unknown
  readonly last_reported: Date | null
  readonly health: unknown
}

/** The known GPU a row stands for; absent when the row lacks what the inventory needs. */
const knownGpuOf = (row: CurrentRow): KnownGpu | undefined => {
  const gpu = Option.getOrUndefined(decodeGpu(row.gpu))
  if (gpu === undefined || gpu.uuid !== row.uuid) return undefined
  // A health the store cannot read is unknown: the next reading tells it, without an event.
  const health = row.health === null ? undefined : Option.getOrUndefined(decodeHealth(row.health))
  return {
    uuid: row.uuid,
    node: row.node,
    ...(row.node_uid === null ? {} : { nodeUid: row.node_uid }),
    ...(row.provider_id === null ? {} : { providerId: row.provider_id }),
    machine: row.machine,
    pod: { namespace: row.pod_namespace, name: row.pod_name },
    gpu: gpu as Gpu,
    ...(row.driver_version === null ? {} : { driverVersion: row.driver_version }),
    ...(row.cuda_version === null ? {} : { cudaVersion: row.cuda_version }),
    serialShared: row.serial_shared,
    ...(health === undefined ? {} : { health }),
    firstSeen: row.first_seen,
    lastSeen: row.last_seen,
    lastReported: row.last_reported ?? row.last_seen,
  }
}

/** The columns the exporter sets, then those only the store needs to rebuild a known GPU. */
const upsertColumns = [
  ...currentColumns,
  ["node_uid", "text"],
  ["pod_namespace", "text"],
  ["pod_name", "text"],
  ["gpu", "jsonb"],
  ["last_reported", "timestamptz"],
] as const

const upsertRow = (cluster: string, known: KnownGpu): ReadonlyArray<Cell> => [
  cluster,
  known.uuid,
  known.node,
  known.machine,
  known.gpu.serial ?? "",
  chassisOf(known),
  known.gpu.product ?? null,
  known.providerId ?? null,
  known.driverVersion ?? null,
  known.cudaVersion ?? null,
  known.serialShared,
  known.firstSeen.toISOString(),
  known.lastSeen.toISOString(),
  known.health?.state ?? null,
  healthJson(known.health),
  known.nodeUid ?? null,
  known.pod.namespace,
  known.pod.name,
  JSON.stringify(known.gpu),
  known.lastReported.toISOString(),
]

const statements = (tables: PostgresTables) => {
  const names = upsertColumns.map(([name]) => name)
  const updated = names.filter((name) => name !== "cluster" && name !== "uuid")
  return {
    load: `SELECT uuid, node, machine, provider_id, driver_version, cuda_version, serial_shared, first_seen, last_seen,
        node_uid, pod_namespace, pod_name, gpu, last_reported, health
      FROM ${tables.current}
      WHERE cluster = $1 AND removed_at IS NULL AND gpu IS NOT NULL AND pod_namespace IS NOT NULL AND pod_name IS NOT NULL`,
    upsert: `INSERT INTO ${tables.current} AS current (${names.join(", ")}) SELECT * FROM ${unnestOf(upsertColumns)}
      ON CONFLICT (cluster, uuid) DO UPDATE SET ${updated.map((name) => `${name} = excluded.${name}`).join(", ")},
        removed_at = NULL, updated_at = now()`,
    remove: `UPDATE ${tables.current} SET removed_at = $3, updated_at = now()
      WHERE cluster = $1 AND uuid = ANY($2::text[]) AND removed_at IS NULL`,
  }
}

/**
 * The inventory's durable store in the current-state table of a `postgres` exporter: the rows of
 * its own cluster, so clusters can share the tables. `apply` writes a batch of changes in one
 * transaction, upserting every GPU's row or marking it removed (never deleting it: the row keeps
 * where the GPU was last). A load returns the GPUs of the cluster not marked removed.
 */
export const make = (options: {
  readonly pool: pg.Pool
  readonly tables: PostgresTables
  readonly cluster: string
}): InventoryStore["Service"] => {
  const { pool, cluster } = options
  const sql = statements(options.tables)
  const storeError = (operation: "load" | "apply") => (failure: PostgresFailure) =>
    new InventoryStoreError({
      store: kind,
      operation,
      message: `postgres ${options.tables.display}_current: ${failure.message}`,
      conflict: false,
    })

  const load = transaction(pool, (client) => client.query<CurrentRow>(sql.load, [cluster])).pipe(
    Effect.map((result) => result.rows.flatMap((row) => knownGpuOf(row) ?? [])),
    Effect.mapError(storeError("load")),
  )

  const apply = (changes: ReadonlyArray<InventoryChange>) =>
    Effect.gen(function* () {
      const last = new Map<string, InventoryChange>()
      for (const change of changes) {
        last.delete(change.uuid)
        last.set(change.uuid, change)
      }
      const upserts: Array<ReadonlyArray<Cell>> = []
      const removed: Array<string> = []
      for (const change of last.values()) {
        if (change._tag === "Upsert") upserts.push(upsertRow(cluster, change.gpu))
        else removed.push(change.uuid)
      }
      if (upserts.length === 0 && removed.length === 0) return
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      yield* transaction(pool, async (client) => {
        if (upserts.length > 0) await client.query(sql.upsert, transpose(upserts, upsertColumns.length))
        if (removed.length > 0) await client.query(sql.remove, [cluster, removed, now])
      }).pipe(Effect.mapError(storeError("apply")))
    })

  return InventoryStore.of({ kind, load, apply })
}

/** Statements of the store wait at most this long. */
const statementTimeout = Duration.seconds(10)

/** The store over a pool of its own, ended when the scope closes; the tables are made ready as the exporter does. */
export const scoped = (options: {
  readonly config: PostgresExporterConfig
  readonly cluster: string
}): Effect.Effect<InventoryStore["Service"], ComponentStartError, Scope.Scope> =>
  openPool(options.config, {
    component: "inventory",
    name: `inventory (${options.cluster})`,
    statementTimeout,
  }).pipe(Effect.map(({ pool, tables }) => make({ pool, tables, cluster: options.cluster })))

/**
 * The store kept by a `postgres` exporter, named by that exporter's id (`store: postgres`): its
 * server, credentials and tables, over connections of the store's own.
 */
export const storeFactory: StoreFactory = {
  ...exporterKeptStore("postgres"),
  create: (exporterConfig, settings) =>
    // The service passes the config the `postgres` exporter's own settings built.
    scoped({ config: exporterConfig as PostgresExporterConfig, cluster: settings.clusterName }),
}
