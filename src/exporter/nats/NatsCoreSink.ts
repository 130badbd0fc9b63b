import * as Effect from "effect/Effect"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import { type Sink, SinkError } from "../exporterhelper/Sink.ts"
import type { NatsFailureLog } from "./NatsFailureLog.ts"
import type { NatsLink } from "./NatsLink.ts"
import { natsMessage } from "./NatsMessage.ts"
import { publishFailure } from "./NatsPublishFailure.ts"

/**
 * Core NATS: each event published as one message, then a flush, so a batch counts as written once
 * the server has received it. Without a stream nothing is stored: subscribers present at that moment
 * get the messages, others never do. The write deadline is the exporter's. A publish the server
 * refuses (a permission the user lacks) fails the batch for good and is logged once through `failures`.
 */
export const make = (options: {
  readonly link: NatsLink
  readonly subjectPrefix: string
  readonly failures: NatsFailureLog
}): Sink => ({
  write: (events: ReadonlyArray<InventoryEvent>) =>
    Effect.gen(function* () {
      const connection = yield* options.link.connection
      const before = yield* options.link.publishRefusals
      yield* Effect.try({
        try: () => {
          for (const event of events) {
            const message = natsMessage(options.subjectPrefix, event)
            connection.publish(message.subject, message.payload, { headers: message.headers })
          }
        },
        catch: publishFailure,
      })
      yield* Effect.tryPromise({ try: () => connection.flush(), catch: publishFailure })
      // The server reports a refused publish before answering the flush; one more round trip makes sure
      // the report has been read before the batch counts as written.
      yield* Effect.tryPromise({ try: () => connection.flush(), catch: publishFailure })
      const after = yield* options.link.publishRefusals
      if (after.count > before.count) {
        const refusal = new SinkError({
          message: `NATS publish failed: ${after.last ?? "refused"}`,
          retryable: false,
          reported: true,
        })
        yield* options.failures.failed(refusal.message)
        return yield* refusal
      }
      yield* options.failures.recovered
    }),
})
