import {
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from "@nats-io/jetstream"
import { nanos } from "@nats-io/transport-node"
import { Duration, Effect } from "effect"
import { NatsStreamError } from "./NatsStreamError.ts"
import { streamSubject } from "./NatsSubject.ts"

/** Window in which JetStream drops a second message with the same `Nats-Msg-Id`. */
export const duplicateWindow = Duration.minutes(2)

const apiTimeout = Duration.seconds(10)

/** The stream the exporter creates when none exists: file storage, limits retention, kept forever. */
export const streamConfig = (name: string, prefix: string): Partial<StreamConfig> & { readonly name: string } => ({
  name,
  subjects: [streamSubject(prefix)],
  duplicate_window: nanos(Duration.toMillis(duplicateWindow)),
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  max_age: 0,
})

const reason = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

const isStreamNotFound = (cause: unknown): boolean =>
  cause instanceof JetStreamApiError && cause.code === JetStreamApiCodes.StreamNotFound

/**
 * Makes sure the stream exists and captures the exporter's subjects: creates it with `streamConfig`
 * when missing, adds `<prefix>.>` to its subjects when it lacks them, and leaves every other setting
 * of an existing stream as its owner configured it.
 */
export const ensureStream = Effect.fnUntraced(function* (manager: JetStreamManager, name: string, prefix: string) {
  const call = <A>(operation: string, run: () => Promise<A>) =>
    Effect.tryPromise({
      try: run,
      catch: (cause) => cause,
    }).pipe(
      Effect.timeout(apiTimeout),
      Effect.mapError((cause) => new NatsStreamError({ stream: name, message: `${operation}: ${reason(cause)}` })),
    )
  const existing = yield* Effect.tryPromise({ try: () => manager.streams.info(name), catch: (cause) => cause }).pipe(
    Effect.timeout(apiTimeout),
    Effect.map((info) => info.config),
    Effect.catch((cause) =>
      isStreamNotFound(cause)
        ? Effect.succeed(undefined)
        : Effect.fail(new NatsStreamError({ stream: name, message: `lookup: ${reason(cause)}` })),
    ),
  )
  const wanted = streamSubject(prefix)
  if (existing === undefined) {
    yield* call("create", () => manager.streams.add(streamConfig(name, prefix)))
    yield* Effect.logInfo("created JetStream stream").pipe(Effect.annotateLogs({ stream: name, subjects: wanted }))
    return
  }
  if (!existing.subjects.includes(wanted)) {
    yield* call("update", () => manager.streams.update(name, { subjects: [...existing.subjects, wanted] }))
    yield* Effect.logInfo("added subjects to JetStream stream").pipe(
      Effect.annotateLogs({ stream: name, subjects: wanted }),
    )
  }
})
