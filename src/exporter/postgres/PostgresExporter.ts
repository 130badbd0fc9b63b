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
 * retried queue. A server that refuses the exporter for good at start fails the start.
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
      const { pool, tables } = yield* openPool(config, {
        component: settings.id,
        name: settings.id,
        statementTimeout: queue.writeTimeout,
      })
      return yield* QueuedExporter.make({
        id: settings.id,
        sink: PostgresSink.make({ pool, tables }),
        settings: queue,
        shutdownTimeout,
      })
    }),
})

export const factory: ExporterFactory<PostgresExporterConfig> & Configured<PostgresExporterConfig> = makeFactory()
