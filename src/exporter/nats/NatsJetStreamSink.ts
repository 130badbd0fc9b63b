import { jetstream } from "@nats-io/jetstream"
import type { NatsConnection } from "@nats-io/transport-node"
import { Duration, Effect } from "effect"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import type { Sink, SinkError } from "../Sink.ts"
import { natsMessage } from "./NatsMessage.ts"
import { publishFailure } from "./NatsPublishFailure.ts"

/**
 * JetStream: every event of a batch published to `stream` with its record id as `Nats-Msg-Id`, the
 * batch written once the stream acknowledged each one. The messages go out in order without waiting
 * for each ack; when any fails (timeout, no responders while the server is away) the whole batch is
 * written again and the stream drops the ones it already holds as duplicates, so each event is
 * stored once. `ackTimeout` bounds the wait for one ack.
 */
export const make = (options: {
  readonly connection: Effect.Effect<NatsConnection, SinkError>
  readonly subjectPrefix: string
  readonly stream: string
  readonly ackTimeout: Duration.Duration
}): Sink => {
  const timeout = Duration.toMillis(options.ackTimeout)
  return {
    write: (events: ReadonlyArray<InventoryEvent>) =>
      Effect.gen(function* () {
        const connection = yield* options.connection
        const client = jetstream(connection)
        yield* Effect.tryPromise({
          try: async () => {
            const acks = events.map((event) => {
              const message = natsMessage(options.subjectPrefix, event)
              return client.publish(message.subject, message.payload, {
                msgID: message.id,
                headers: message.headers,
                expect: { streamName: options.stream },
                timeout,
                retries: 0,
              })
            })
            const outcomes = await Promise.allSettled(acks)
            const failure = outcomes.find((outcome) => outcome.status === "rejected")
            if (failure !== undefined) throw failure.reason
          },
          catch: publishFailure,
        })
      }),
  }
}
