import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { DurableHistory } from "../../fleet/Fleet.ts"
import type { HistoryEntry } from "../../fleet/FleetView.ts"
import type { PostgresExporterConfig } from "./PostgresConfig.ts"
import { type PostgresFailure, postgresFailure } from "./PostgresFailure.ts"
import * as PostgresPool from "./PostgresPool.ts"
import { postgresTables } from "./PostgresTables.ts"

/** The deadline of one history read, on the server and around it. */
export const historyReadTimeout = Duration.seconds(3)

interface HistoryRow {
  readonly read_time: Date
  readonly cluster: string
  readonly event: string
  readonly node: string
  readonly machine: string
  readonly chassis: string
  readonly health_state: string | null
  readonly previous_health_state: string | null
  readonly previous_node: string | null
  readonly previous_machine: string | null
  readonly previous_cluster: string | null
}

const entryOf = (row: HistoryRow, acrossClusters: boolean): HistoryEntry => ({
  time: row.read_time.toISOString(),
  event: row.event,
  node: row.node,
  machine: row.machine,
  chassis: row.chassis,
  ...(row.health_state === null ? {} : { healthState: row.health_state }),
  ...(row.previous_health_state === null ? {} : { previousHealthState: row.previous_health_state }),
  ...(row.previous_node === null ? {} : { previousNode: row.previous_node }),
  ...(row.previous_machine === null ? {} : { previousMachine: row.previous_machine }),
  ...(acrossClusters ? { cluster: row.cluster } : {}),
  ...(row.previous_cluster === null ? {} : { previousCluster: row.previous_cluster }),
})

/**
 * A GPU's history from the `postgres` exporter's history table, for the fleet API: its `added`, `moved`,
 * `removed` and `health` rows in the cluster (in every cluster on a hub, each entry naming its cluster), newest first, read on a pool of its own (one connection,
 * opened on the first read) within `historyReadTimeout`. Nothing is read at start: a server that is down
 * fails the reads, and the API then answers from the process.
 */
export const historyReader = (
  config: PostgresExporterConfig,
  /** The service's cluster; none on a hub, whose table holds the rows of every cluster. */
  cluster: string | undefined,
): Effect.Effect<DurableHistory, PostgresFailure, Scope.Scope> =>
  Effect.gen(function* () {
    const tables = postgresTables(config.schema, config.table)
    const pool = yield* PostgresPool.scoped(config.connection, {
      statementTimeout: historyReadTimeout,
      maxConnections: 1,
      name: "fleet-history",
    })
    const acrossClusters = cluster === undefined
    const sql = `SELECT read_time, cluster, event, node, machine, chassis, health_state, previous_health_state, previous_node, previous_machine,
        previous_cluster
      FROM ${tables.history}
      WHERE uuid = $1 AND ${acrossClusters ? "" : "cluster = $3 AND "}event IN ('added', 'moved', 'removed', 'health')
      ORDER BY read_time DESC, inserted_at DESC
      LIMIT $2`
    return (uuid: string, limit: number) =>
      Effect.tryPromise({
        try: (signal) => {
          const query = pool.query<HistoryRow>(sql, acrossClusters ? [uuid, limit] : [uuid, limit, cluster])
          signal.addEventListener("abort", () => query.catch(() => undefined))
          return query
        },
        catch: postgresFailure,
      }).pipe(
        Effect.timeoutOrElse({
          duration: historyReadTimeout,
          orElse: () =>
            Effect.fail<PostgresFailure>({
              message: `no answer within ${Duration.format(historyReadTimeout)}`,
              retryable: true,
            }),
        }),
        Effect.map((result) =>
          result.rows.length === 0 ? undefined : result.rows.map((row) => entryOf(row, acrossClusters)),
        ),
      )
  })
