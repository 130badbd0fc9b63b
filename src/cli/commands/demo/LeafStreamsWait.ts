import { jetstreamManager } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

const connectTimeoutMs = 5_000
const infoTimeoutMs = 2_000

/**
 * Until a cluster's leaf holds its events stream and its KV bucket's stream, asking every 200 ms for at
 * most 60 s: the hub then sources streams that exist, rather than retrying a missing source on the
 * server's own, slower schedule. Fails with a line naming the leaf when they do not appear.
 */
export const untilLeafStreams = (leafUrl: string, streams: ReadonlyArray<string>): Effect.Effect<void, string> =>
  Effect.acquireUseRelease(
    Effect.tryPromise({
      try: () => connect({ servers: leafUrl, timeout: connectTimeoutMs }),
      catch: (cause) => `cannot connect to the leaf nats-server at ${leafUrl}: ${String(cause)}`,
    }),
    (connection) =>
      Effect.tryPromise({
        try: async () => {
          const manager = await jetstreamManager(connection, { timeout: infoTimeoutMs })
          for (const stream of streams) await manager.streams.info(stream)
        },
        catch: () => `the cluster's service made no stream ${streams.join(" and ")} on ${leafUrl} within 60s`,
      }).pipe(Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo({ times: 300 })))),
    (connection) => Effect.promise(() => connection.close()),
  )
