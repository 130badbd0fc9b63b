import { readFileSync } from "node:fs"
import type { ConnectionOptions } from "node:tls"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import pg from "pg"
import type { PostgresConnectionSettings } from "./PostgresConfig.ts"
import { type PostgresFailure, postgresFailure } from "./PostgresFailure.ts"

/** How long opening one connection may take. */
export const connectTimeout = Duration.seconds(5)

/**
 * TLS as libpq's `sslmode` means it: `disable` no TLS; `require` TLS without checking the
 * certificate; `verify-ca` the chain but not the host name; `verify-full` the chain and the host name.
 */
export const tlsOptions = (settings: PostgresConnectionSettings): false | ConnectionOptions => {
  const ca = settings.sslRootCertFile === undefined ? {} : { ca: readFileSync(settings.sslRootCertFile, "utf8") }
  switch (settings.sslmode) {
    case "disable":
      return false
    case "require":
      return { rejectUnauthorized: false }
    case "verify-ca":
      return { ...ca, rejectUnauthorized: true, checkServerIdentity: () => undefined }
    case "verify-full":
      return { ...ca, rejectUnauthorized: true }
  }
}

/**
 * The driver's pool config: separate fields, never a concatenated URL, so any password works.
 * `statementTimeout` bounds every statement on the server and the driver's wait for it.
 */
export const poolConfig = (
  settings: PostgresConnectionSettings,
  options: { readonly statementTimeout: Duration.Input; readonly maxConnections: number },
): pg.PoolConfig => ({
  host: settings.host,
  port: settings.port,
  database: settings.database,
  user: settings.user,
  password: settings.password,
  ssl: tlsOptions(settings),
  application_name: "gpu-serials",
  connectionTimeoutMillis: Duration.toMillis(connectTimeout),
  statement_timeout: Duration.toMillis(options.statementTimeout),
  query_timeout: Duration.toMillis(options.statementTimeout) + 1_000,
  idle_in_transaction_session_timeout: Duration.toMillis(options.statementTimeout) * 2,
  idleTimeoutMillis: 30_000,
  max: options.maxConnections,
})

/** A connection pool, ended when the scope closes; `name` tells its errors apart in the logs. */
export const scoped = (
  settings: PostgresConnectionSettings,
  options: { readonly statementTimeout: Duration.Input; readonly maxConnections: number; readonly name: string },
): Effect.Effect<pg.Pool, PostgresFailure, Scope.Scope> =>
  Effect.gen(function* () {
    // The pool's events are logged through the service's logger, not Effect's default one on stdout.
    const runFork = Effect.runForkWith(yield* Effect.context<never>())
    return yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const pool = new pg.Pool(poolConfig(settings, options))
          // An idle connection the server closes is dropped by the pool; without a listener it would end the process.
          pool.on("error", (error) => {
            runFork(
              Effect.logWarning("postgres connection lost").pipe(
                Effect.annotateLogs({ pool: options.name, reason: postgresFailure(error).message }),
              ),
            )
          })
          return pool
        },
        catch: (cause) => ({ ...postgresFailure(cause), retryable: false }),
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeout(Duration.seconds(5)), Effect.ignore),
    )
  })

const ignoreError = (): void => undefined

/**
 * Runs `body` in one transaction on a connection of the pool. On any failure or interruption the
 * connection is destroyed rather than returned, so the server rolls back what was not committed and
 * no half-finished transaction is ever handed to the next write.
 */
export const transaction = <A>(
  pool: pg.Pool,
  body: (client: pg.PoolClient) => Promise<A>,
): Effect.Effect<A, PostgresFailure> =>
  Effect.acquireUseRelease(
    Effect.tryPromise({
      try: async () => {
        const client = await pool.connect()
        // A connection that breaks while checked out also fails its query; unheard, the event would end the process.
        client.on("error", ignoreError)
        return client
      },
      catch: postgresFailure,
    }),
    (client) =>
      Effect.tryPromise({
        try: async () => {
          await client.query("BEGIN")
          const result = await body(client)
          await client.query("COMMIT")
          return result
        },
        catch: postgresFailure,
      }),
    (client, exit) =>
      Effect.sync(() => {
        client.off("error", ignoreError)
        client.release(exit._tag === "Failure" ? true : undefined)
      }),
  )
