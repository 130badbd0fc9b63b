import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type pg from "pg"
import { ComponentStartError } from "../../component/ComponentStartError.ts"
import { type Configured, configuredBy } from "../../config/ComponentSettings.ts"
import type { ExporterFactory } from "../../pipeline/Exporter.ts"
import * as QueuedExporter from "../exporterhelper/QueuedExporter.ts"
import type { QueueSettings } from "../exporterhelper/QueueSettings.ts"
import { type PostgresExporterConfig, postgresSettings } from "./PostgresConfig.ts"
import type { PostgresFailure } from "./PostgresFailure.ts"
import * as PostgresPool from "./PostgresPool.ts"
import { prepare } from "./PostgresSchema.ts"
import * as PostgresSink from "./PostgresSink.ts"
import { type PostgresTables, postgresTables } from "./PostgresTables.ts"
import * as PostgresTablesReady from "./PostgresTablesReady.ts"

/** Attempts to reach the server at start: 5, exponential from 1 s with jitter, at most 10 s apart. */
const startSchedule = Schedule.exponential(Duration.seconds(1)).pipe(
  Schedule.jittered,
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(10)))),
  Schedule.upTo({ times: 4 }),
)

const shutdownTimeout = Duration.seconds(5)

/** The tables of a config. */
export const tablesOf = (config: Pick<PostgresExporterConfig, "schema" | "table">): PostgresTables =>
  postgresTables(config.schema, config.table)

/**
 * A pool over the configured server with the tables ready: migrated with `autoMigrate`, else
 * checked. An unreachable server is tried a few times; a refusal (authentication, a missing table
 * or database, a permission) fails at once.
 */
export const openPool = (
  config: PostgresExporterConfig,
  options: { readonly component: string; readonly name: string; readonly statementTimeout: Duration.Duration },
): Effect.Effect<{ readonly pool: pg.Pool; readonly tables: PostgresTables }, ComponentStartError, Scope.Scope> => {
  const tables = tablesOf(config)
  const startFailure = (failure: PostgresFailure) =>
    new ComponentStartError({ component: options.component, message: `postgres ${tables.display}: ${failure.message}` })
  return Effect.gen(function* () {
    const pool = yield* PostgresPool.scoped(config.connection, {
      statementTimeout: options.statementTimeout,
      maxConnections: 2,
      name: options.name,
    })
    yield* prepare(pool, tables, config.autoMigrate).pipe(
      Effect.retry({ schedule: startSchedule, while: (failure) => failure.retryable }),
    )
    return { pool, tables }
  }).pipe(Effect.mapError(startFailure))
}

export interface PostgresExporterOptions {
  /** Buffer and retry settings that replace the section's. */
  readonly queue?: QueueSettings
}

/**
 * The `postgres` exporter factory: each batch of events is one transaction that appends the events
 * to the history table and updates the current state of their GPUs, through the common bounded,
 * retried queue. A server that refuses the exporter for good at start fails the start; one that is
 * unreachable or silent does not hold it: the tables are made ready in the background while records
 * wait in the queue (see `PostgresTablesReady`).
 */
export const makeFactory = (
  options: PostgresExporterOptions = {},
): ExporterFactory<PostgresExporterConfig> & Configured<PostgresExporterConfig> => ({
  kind: "exporter",
  type: "postgres",
  ...configuredBy(postgresSettings),
  create: (config, settings) =>
    Effect.gen(function* () {
      const queue = options.queue ?? config.queue
      const tables = tablesOf(config)
      const startFailure = (failure: PostgresFailure) =>
        new ComponentStartError({ component: settings.id, message: `postgres ${tables.display}: ${failure.message}` })
      const pool = yield* PostgresPool.scoped(config.connection, {
        statementTimeout: queue.writeTimeout,
        maxConnections: 2,
        name: settings.id,
      }).pipe(Effect.mapError(startFailure))
      const tablesReady = yield* PostgresTablesReady.start(pool, tables, config.autoMigrate).pipe(
        Effect.mapError(startFailure),
      )
      const sink = PostgresSink.make({ pool, tables })
      return yield* QueuedExporter.make({
        id: settings.id,
        sink: { ...sink, write: (events) => Effect.andThen(tablesReady.ready, sink.write(events)) },
        settings: queue,
        shutdownTimeout,
      })
    }),
})

export const factory: ExporterFactory<PostgresExporterConfig> & Configured<PostgresExporterConfig> = makeFactory()
