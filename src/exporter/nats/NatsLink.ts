import type { NatsConnection } from "@nats-io/transport-node"
import { Deferred, Duration, Effect, Option, Schedule, type Scope } from "effect"
import { redactUrlsIn } from "../../log/UrlRedaction.ts"
import { SinkError } from "../Sink.ts"
import { drain, type NatsConnectionConfig, open, serverList } from "./NatsConnection.ts"

/** First connection attempts: exponential from 500 ms with jitter, at most 30 s apart, forever. */
const connectSchedule = Schedule.exponential(Duration.millis(500)).pipe(
  Schedule.jittered,
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30)))),
)

/**
 * The exporter's connection to NATS. It is made in the background, so an exporter starts while NATS
 * is unreachable and its records wait in the exporter's buffer; once made, nats.js reconnects it
 * forever. `prepare` runs on the new connection before anything is published (stream set-up).
 */
export interface NatsLink {
  /** The connection once made and prepared; a retryable failure before. */
  readonly connection: Effect.Effect<NatsConnection, SinkError>
}

/**
 * Starts connecting with retries and returns at once. Closing the scope stops the attempts and
 * drains the connection; add it to the scope before anything that publishes on it, so it closes after.
 */
export const make = Effect.fnUntraced(function* <E extends { readonly message: string }>(options: {
  readonly config: NatsConnectionConfig
  readonly name: string
  readonly prepare: (connection: NatsConnection) => Effect.Effect<void, E>
}): Effect.fn.Return<NatsLink, never, Scope.Scope> {
  const ready = yield* Deferred.make<NatsConnection>()
  let opened: NatsConnection | undefined
  yield* Effect.addFinalizer(() => Effect.suspend(() => (opened === undefined ? Effect.void : drain(opened))))
  const establish = Effect.gen(function* () {
    const connection = opened ?? (yield* open(options.config, options.name))
    opened = connection
    yield* options.prepare(connection)
    yield* Deferred.succeed(ready, connection)
  }).pipe(
    Effect.tapError((error) =>
      Effect.logWarning("NATS not ready, retrying").pipe(
        Effect.annotateLogs({ servers: serverList(options.config), reason: redactUrlsIn(error.message) }),
      ),
    ),
    Effect.retry(connectSchedule),
  )
  yield* Effect.forkScoped(establish)
  const connection = Deferred.poll(ready).pipe(
    Effect.flatMap((polled) =>
      Option.isNone(polled)
        ? Effect.fail(new SinkError({ message: "NATS is not connected yet", retryable: true }))
        : polled.value,
    ),
  )
  return { connection }
})
