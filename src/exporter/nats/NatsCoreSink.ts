import { Effect } from "effect"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import type { Sink } from "../Sink.ts"
import type { NatsFailureLog } from "./NatsFailureLog.ts"
import type { NatsLink } from "./NatsLink.ts"
import { natsMessage } from "./NatsMessage.ts"
import { publishFailure } from "./NatsPublishFailure.ts"

/**
 * Core NATS: each event published as one message, then a flush, so a batch counts as written once
 * the server has received it. Without a stream nothing is stored: subscribers present at that moment
 * get the messages, others never do. The write deadline is the exporter's.
 */
export const make = (options: {
  readonly link: NatsLink
  readonly subjectPrefix: string
  readonly failures: NatsFailureLog
}): Sink => ({
  write: (events: ReadonlyArray<InventoryEvent>) =>
    Effect.gen(function* () {
      const connection = yield* options.link.connection
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
      yield* options.failures.recovered
    }),
})
