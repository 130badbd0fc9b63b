import { jetstream } from "@nats-io/jetstream"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import { type Sink, SinkError } from "../exporterhelper/Sink.ts"
import type { NatsFailureLog } from "./NatsFailureLog.ts"
import type { NatsLink } from "./NatsLink.ts"
import { natsMessage } from "./NatsMessage.ts"
import { isNoResponders, isPermanent } from "./NatsPermanentError.ts"
import { publishFailure } from "./NatsPublishFailure.ts"

/**
 * JetStream: every event of a batch published to `stream` with its record id as `Nats-Msg-Id`, the
 * batch written once the stream acknowledged each one. The messages go out in order without waiting
 * for each ack; when any fails (timeout, no responders while the server is away) the whole batch is
 * written again and the stream drops the ones it already holds as duplicates, so each event is
 * stored once. `ackTimeout` bounds the wait for one ack.
 *
 * A refusal (a permission the user lacks, the subjects now captured by another stream) fails the
 * batch for good and is logged once through `failures`. When nobody answers, the stream may have been
 * deleted or lost its subjects: the link sets it up again (re-created or updated when the exporter
 * may, a permanent failure otherwise) and the batch is retried.
 */
export const make = (options: {
  readonly link: NatsLink
  readonly subjectPrefix: string
  readonly stream: string
  /** Whether each publish carries `Nats-Expected-Stream`: a hub on nats-server before 2.10.14 cannot source it. */
  readonly expectStream: boolean
  readonly ackTimeout: Duration.Duration
  readonly failures: NatsFailureLog
}): Sink => {
  const timeout = Duration.toMillis(options.ackTimeout)
  return {
    write: (events: ReadonlyArray<InventoryEvent>) =>
      Effect.gen(function* () {
        const connection = yield* options.link.connection
        const rejections = yield* Effect.tryPromise({
          try: async () => {
            const client = jetstream(connection)
            const acks = events.map((event) => {
              const message = natsMessage(options.subjectPrefix, event)
              return client.publish(message.subject, message.payload, {
                msgID: message.id,
                headers: message.headers,
                ...(options.expectStream ? { expect: { streamName: options.stream } } : {}),
                timeout,
                retries: 0,
              })
            })
            const outcomes = await Promise.allSettled(acks)
            return outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [outcome.reason as unknown] : []))
          },
          catch: publishFailure,
        })
        const [first] = rejections
        if (first === undefined) return yield* options.failures.recovered
        // One refusal decides the batch: the other messages may only have timed out behind it.
        const refusal = rejections.find(isPermanent)
        if (refusal !== undefined) {
          const failure = publishFailure(refusal)
          yield* options.failures.failed(failure.message)
          return yield* new SinkError({ message: failure.message, retryable: false, reported: true })
        }
        if (rejections.some(isNoResponders)) {
          yield* options.link.prepareAgain
          return yield* new SinkError({
            message: `NATS stream ${options.stream} did not answer (no stream captures the subject, or JetStream is not up)`,
            retryable: true,
          })
        }
        return yield* publishFailure(first)
      }),
  }
}
