import type { NatsConnection } from "@nats-io/transport-node"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import { redactUrlsIn } from "../../log/UrlRedaction.ts"
import { NatsConnectError } from "../../natsclient/NatsConnectError.ts"
import { drain, type NatsConnectionConfig, open, serverList } from "../../natsclient/NatsConnection.ts"
import { SinkError } from "../exporterhelper/Sink.ts"
import type { NatsFailureLog } from "./NatsFailureLog.ts"
import { type PublishRefusals, watch as watchRefusals } from "./NatsPublishRefusals.ts"

/** First connection attempts: exponential from 500 ms with jitter, at most 30 s apart, forever. */
const connectSchedule = Schedule.exponential(Duration.millis(500)).pipe(
  Schedule.jittered,
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30)))),
)

/**
 * How long the start waits for the first attempt to connect and set up before going on without it: long
 * enough for a server that answers to refuse a misconfiguration, short enough that a silent one holds no
 * other part of the service back.
 */
const startWait = Duration.seconds(2)

/** A failed set-up; `permanent` when NATS refused it for a reason that retrying cannot change. */
export interface SetupError {
  readonly message: string
  readonly permanent: boolean
}

/**
 * The exporter's connection to NATS. It is made in the background, so an exporter starts while NATS
 * is unreachable and its records wait in the exporter's buffer; once made, nats.js reconnects it
 * forever. `prepare` runs on the new connection before anything is published (stream set-up).
 */
export interface NatsLink {
  /**
   * The connection once made and prepared. Before: a retryable failure while connecting, or the
   * set-up's permanent failure (not retryable) while NATS refuses it.
   */
  readonly connection: Effect.Effect<NatsConnection, SinkError>
  /**
   * Runs `prepare` again on the connection, when a publish suggests the stream changed (deleted,
   * subjects taken away): a permanent failure is logged and is not retryable.
   */
  readonly prepareAgain: Effect.Effect<void, SinkError>
  /** The core publishes the server refused on the connection so far (none before it is made). */
  readonly publishRefusals: Effect.Effect<PublishRefusals>
}

/**
 * Starts connecting with retries and waits (up to 2 s) for the first attempt: when NATS refuses the
 * credentials or the set-up for good (overlapping subjects, a refused stream config, a missing
 * permission), the start fails with its reason; when NATS is unreachable or slow, it returns and keeps trying in the
 * background. A permanent set-up failure found later is logged once through `failures` and fails
 * every write until an attempt succeeds. Closing the scope stops the attempts and drains the
 * connection; add it to the scope before anything that publishes on it, so it closes after.
 */
export const make = Effect.fnUntraced(function* <E extends SetupError>(options: {
  readonly config: NatsConnectionConfig
  readonly name: string
  readonly prepare: (connection: NatsConnection) => Effect.Effect<void, E>
  readonly failures: NatsFailureLog
}): Effect.fn.Return<NatsLink, E | NatsConnectError, Scope.Scope> {
  const { failures } = options
  const scope = yield* Effect.scope
  let refusals: Effect.Effect<PublishRefusals> = Effect.succeed({ count: 0, last: undefined })
  const ready = yield* Deferred.make<NatsConnection>()
  const firstAttempt = yield* Deferred.make<void, E | NatsConnectError>()
  let opened: NatsConnection | undefined
  /** The set-up's permanent failure, or the server's refusal of the credentials, while it lasts. */
  let refused: E | NatsConnectError | undefined
  yield* Effect.addFinalizer(() => Effect.suspend(() => (opened === undefined ? Effect.void : drain(opened))))

  const refuse = (error: E | NatsConnectError) =>
    Effect.suspend(() => {
      refused = error
      return failures.failed(error.message)
    })

  const setUp = (connection: NatsConnection) =>
    options.prepare(connection).pipe(
      Effect.tapError((error) => (error.permanent ? refuse(error) : Effect.void)),
      Effect.tap(() =>
        Effect.suspend(() => {
          refused = undefined
          return failures.recovered
        }),
      ),
    )

  // One WARN each time the reason NATS is not ready changes, not one per attempt while it lasts.
  let warnedReason: string | undefined
  const notReady = (reason: string) =>
    Effect.suspend(() => {
      if (warnedReason === reason) return Effect.void
      warnedReason = reason
      return Effect.logWarning("NATS not ready, retrying").pipe(
        Effect.annotateLogs({ servers: serverList(options.config), reason }),
      )
    })

  const establish = Effect.gen(function* () {
    if (opened === undefined) {
      opened = yield* open(options.config, options.name).pipe(
        // Credentials the server refuses are named, once, as what retrying cannot change; attempts go on
        // (at the capped backoff) for credentials fixed on the server's side.
        Effect.tapError((error) => (error.refused === true ? refuse(error) : Effect.void)),
      )
      refusals = yield* watchRefusals(opened).pipe(Scope.provide(scope))
    }
    const connection = opened
    yield* setUp(connection)
    warnedReason = undefined
    yield* Deferred.succeed(ready, connection)
  }).pipe(
    Effect.tapError((error: E | NatsConnectError) =>
      (error instanceof NatsConnectError ? error.refused === true : error.permanent)
        ? Deferred.fail(firstAttempt, error)
        : notReady(redactUrlsIn(error.message)),
    ),
    // The first attempt's outcome, success or a failure that may pass, lets the start go on.
    Effect.ensuring(Deferred.succeed(firstAttempt, undefined)),
    Effect.retry(connectSchedule),
  )
  yield* Effect.forkScoped(establish)
  yield* Deferred.await(firstAttempt).pipe(Effect.timeoutOption(startWait))

  const connection = Deferred.poll(ready).pipe(
    Effect.flatMap((polled) => {
      if (Option.isSome(polled)) return polled.value
      return Effect.fail(
        refused === undefined
          ? new SinkError({ message: "NATS is not connected yet", retryable: true })
          : new SinkError({ message: refused.message, retryable: false, reported: true }),
      )
    }),
  )

  const prepareAgain = Deferred.poll(ready).pipe(
    Effect.flatMap((polled) =>
      Option.isNone(polled)
        ? Effect.void
        : Effect.flatMap(polled.value, (current) =>
            setUp(current).pipe(
              Effect.mapError(
                (error) =>
                  new SinkError({ message: error.message, retryable: !error.permanent, reported: error.permanent }),
              ),
            ),
          ),
    ),
  )
  return { connection, prepareAgain, publishRefusals: Effect.suspend(() => refusals) }
})
