import { jetstream } from "@nats-io/jetstream"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { type ClusterHeartbeat, heartbeatSchema } from "../../domain/ClusterHeartbeat.ts"
import type { NatsLink } from "./NatsLink.ts"
import { heartbeatSubject } from "./NatsSubject.ts"

const publishTimeout = Duration.seconds(4)

/**
 * Publishes the cluster's heartbeat every `intervalMs` while the scope is open, the first one an interval after
 * start: to the stream when the
 * exporter has one (so a hub sourcing it hears it, also after a cut link), on core NATS otherwise. A
 * heartbeat that cannot be published is skipped; the next one follows an interval later.
 */
export const start = (options: {
  readonly link: NatsLink
  readonly subjectPrefix: string
  readonly stream?: string
  readonly cluster: string
  readonly intervalMs: number
}) => {
  if (options.intervalMs === 0) return Effect.void
  const subject = heartbeatSubject(options.subjectPrefix, options.cluster)
  const beat = Effect.gen(function* () {
    const time = new Date(yield* Clock.currentTimeMillis).toISOString()
    const heartbeat: ClusterHeartbeat = { schema: heartbeatSchema, cluster: options.cluster, time }
    const connection = yield* options.link.connection
    const payload = JSON.stringify(heartbeat)
    const stream = options.stream
    yield* Effect.tryPromise({
      try: async (): Promise<void> => {
        if (stream === undefined) return connection.publish(subject, payload)
        await jetstream(connection).publish(subject, payload, {
          msgID: `heartbeat.${options.cluster}.${time}`,
          timeout: Duration.toMillis(publishTimeout),
          retries: 0,
        })
      },
      catch: (cause) => cause,
    }).pipe(Effect.timeout(Duration.sum(publishTimeout, Duration.seconds(1))))
  }).pipe(Effect.catch(() => Effect.logDebug("heartbeat not published").pipe(Effect.annotateLogs({ subject }))))
  // The first one an interval after start, as each one after: a cluster's service is heard by its records first.
  return Effect.sleep(Duration.millis(options.intervalMs)).pipe(
    Effect.andThen(beat),
    Effect.forever,
    Effect.forkScoped,
    Effect.asVoid,
  )
}
