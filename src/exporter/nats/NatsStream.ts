import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  StorageType,
  type StreamConfig,
  type StreamUpdateConfig,
} from "@nats-io/jetstream"
import { nanos } from "@nats-io/transport-node"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { NatsStreamSettings } from "./NatsConfig.ts"
import { isPermanent, natsReason } from "./NatsPermanentError.ts"
import { NatsStreamError } from "./NatsStreamError.ts"
import { streamSubject } from "./NatsSubject.ts"

const apiTimeout = Duration.seconds(10)

/** NATS's "no size limit". */
const unlimited = -1

const maxBytesOf = (settings: NatsStreamSettings): number => (settings.maxBytes === 0 ? unlimited : settings.maxBytes)

/**
 * The stream the exporter creates when none exists: file storage, the configured window, retention,
 * age and size, the oldest messages discarded first, so the hourly `observed` events do not grow it forever.
 */
export const streamConfig = (
  name: string,
  prefix: string,
  settings: NatsStreamSettings,
): Partial<StreamConfig> & { readonly name: string } => ({
  name,
  subjects: [streamSubject(prefix)],
  duplicate_window: nanos(settings.duplicateWindowMs),
  retention: settings.retention,
  storage: StorageType.File,
  max_age: nanos(settings.maxAgeMs),
  max_bytes: maxBytesOf(settings),
  discard: DiscardPolicy.Old,
})

const isStreamNotFound = (cause: unknown): boolean =>
  cause instanceof JetStreamApiError && cause.code === JetStreamApiCodes.StreamNotFound

/** A failed stream call as an error naming the stream and the operation, permanent when NATS refused it. */
const streamError = (stream: string, operation: string, cause: unknown): NatsStreamError =>
  new NatsStreamError({
    stream,
    message:
      cause instanceof Error && cause.name === "TimeoutError"
        ? `${operation}: no answer within ${Duration.format(apiTimeout)}`
        : `${operation}: ${natsReason(cause)}`,
    permanent: isPermanent(cause),
  })

/**
 * Makes sure the stream exists. When the exporter may create it (`create`), a missing stream is created
 * with `streamConfig`, and an existing one is updated to capture `<prefix>.>` and to carry the configured
 * duplicate window, max age and max bytes; its retention cannot change, so a different one is only
 * logged. Otherwise a missing stream is a permanent error and an existing one is left as its owner
 * configured it.
 */
export const ensureStream = Effect.fnUntraced(function* (
  manager: JetStreamManager,
  name: string,
  prefix: string,
  settings: NatsStreamSettings,
) {
  const call = <A>(operation: string, run: () => Promise<A>) =>
    Effect.tryPromise({
      try: run,
      catch: (cause) => cause,
    }).pipe(
      Effect.timeout(apiTimeout),
      Effect.mapError((cause) => streamError(name, operation, cause)),
    )
  const existing = yield* Effect.tryPromise({ try: () => manager.streams.info(name), catch: (cause) => cause }).pipe(
    Effect.timeout(apiTimeout),
    Effect.map((info) => info.config),
    Effect.catch((cause) =>
      isStreamNotFound(cause) ? Effect.succeed(undefined) : Effect.fail(streamError(name, "lookup", cause)),
    ),
  )
  const wanted = streamSubject(prefix)
  if (!settings.create) {
    if (existing === undefined) {
      return yield* new NatsStreamError({
        stream: name,
        message: "stream does not exist, and streamCreate is false: create it or set streamCreate to true",
        permanent: true,
      })
    }
    return
  }
  if (existing === undefined) {
    yield* call("create", () => manager.streams.add(streamConfig(name, prefix, settings)))
    yield* Effect.logInfo("created JetStream stream").pipe(Effect.annotateLogs({ stream: name, subjects: wanted }))
    return
  }
  if (existing.retention !== settings.retention) {
    yield* Effect.logWarning("JetStream stream keeps its retention: NATS cannot change it on an existing stream").pipe(
      Effect.annotateLogs({ stream: name, retention: existing.retention, configured: settings.retention }),
    )
  }
  const duplicateWindow = nanos(settings.duplicateWindowMs)
  const maxAge = nanos(settings.maxAgeMs)
  const maxBytes = maxBytesOf(settings)
  const update: Partial<StreamUpdateConfig> = {
    ...(existing.subjects.includes(wanted) ? {} : { subjects: [...existing.subjects, wanted] }),
    ...(existing.duplicate_window === duplicateWindow ? {} : { duplicate_window: duplicateWindow }),
    ...(existing.max_age === maxAge ? {} : { max_age: maxAge }),
    ...(existing.max_bytes === maxBytes ? {} : { max_bytes: maxBytes }),
  }
  if (Object.keys(update).length === 0) return
  yield* call("update", () => manager.streams.update(name, update))
  yield* Effect.logInfo("updated JetStream stream").pipe(
    Effect.annotateLogs({ stream: name, changed: Object.keys(update).join(",") }),
  )
})
