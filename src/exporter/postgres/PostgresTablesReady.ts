import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type pg from "pg"
import { SinkError } from "../exporterhelper/Sink.ts"
import type { PostgresFailure } from "./PostgresFailure.ts"
import { prepare } from "./PostgresSchema.ts"
import type { PostgresTables } from "./PostgresTables.ts"

/** Attempts to get the tables ready: exponential from 1 s with jitter, at most 30 s apart, until one works. */
const prepareSchedule = Schedule.exponential(Duration.seconds(1)).pipe(
  Schedule.jittered,
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30)))),
)

/**
 * How long the start waits for the first attempt: long enough for a server that answers to refuse a
 * misconfiguration (a login, a database, a missing table), short enough that a silent one holds no other
 * part of the service back.
 */
const startCheck = Duration.seconds(2)

/** The exporter's tables, made ready in the background. */
export interface PostgresTablesReady {
  /** Succeeds once the tables are ready; before, fails as the last attempt did (not retryable when the server refuses for good). */
  readonly ready: Effect.Effect<void, SinkError>
}

/**
 * Gets the tables ready (migrated with `autoMigrate`, else checked) with retries in the background. The
 * start waits for the first attempt's answer up to `startCheck`: a refusal then fails it with that
 * failure; an unreachable or silent server does not, and the exporter's records wait in its queue. A
 * refusal found later is logged once as an ERROR, and again when its reason changes; one INFO line says
 * when the tables are ready after a failure.
 */
export const start = Effect.fnUntraced(function* (
  pool: pg.Pool,
  tables: PostgresTables,
  autoMigrate: boolean,
): Effect.fn.Return<PostgresTablesReady, PostgresFailure, Scope.Scope> {
  const prepared = yield* Deferred.make<void>()
  const firstAttempt = yield* Deferred.make<void, PostgresFailure>()
  let lastFailure: PostgresFailure | undefined
  let loggedReason: string | undefined

  const attempt = prepare(pool, tables, autoMigrate).pipe(
    Effect.tap(() =>
      Effect.gen(function* () {
        if (lastFailure !== undefined) {
          yield* Effect.logInfo("postgres exporter tables ready").pipe(Effect.annotateLogs({ tables: tables.display }))
        }
        lastFailure = undefined
        yield* Deferred.succeed(prepared, undefined)
      }),
    ),
    Effect.tapError((failure) =>
      Effect.gen(function* () {
        lastFailure = failure
        if (!failure.retryable) yield* Deferred.fail(firstAttempt, failure)
        if (loggedReason === failure.message) return
        loggedReason = failure.message
        yield* failure.retryable
          ? Effect.logWarning("postgres not ready, retrying").pipe(
              Effect.annotateLogs({ tables: tables.display, reason: failure.message }),
            )
          : Effect.logError("postgres exporter cannot write: the server refuses it, retrying will not help").pipe(
              Effect.annotateLogs({ tables: tables.display, reason: failure.message }),
            )
      }),
    ),
    Effect.ensuring(Deferred.succeed(firstAttempt, undefined)),
  )
  yield* attempt.pipe(Effect.retry(prepareSchedule), Effect.forkScoped)
  yield* Deferred.await(firstAttempt).pipe(Effect.timeoutOption(startCheck))

  const ready = Deferred.poll(prepared).pipe(
    Effect.flatMap((polled) => {
      if (Option.isSome(polled)) return Effect.void
      const failure = lastFailure
      return Effect.fail(
        new SinkError({
          message: `postgres ${tables.display}: ${failure === undefined ? "not ready yet" : failure.message}`,
          retryable: failure?.retryable ?? true,
        }),
      )
    }),
  )
  return { ready }
})
