import { type NatsConnection, PermissionViolationError } from "@nats-io/transport-node"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
/** The core publishes the server refused on a connection so far, and the last one's reason. */
export interface PublishRefusals {
  readonly count: number
  readonly last: string | undefined
}

/**
 * Watches a connection for the publishes the server refuses. A core publish has no answer: the
 * server reports a permission violation later, as an error status on the connection, and drops the
 * message. The watch ends when the connection closes or the scope does.
 */
export const watch = Effect.fnUntraced(function* (
  connection: NatsConnection,
): Effect.fn.Return<Effect.Effect<PublishRefusals>, never, Scope.Scope> {
  let refusals: PublishRefusals = { count: 0, last: undefined }
  yield* Effect.forkScoped(
    Effect.promise(async () => {
      for await (const status of connection.status()) {
        if (
          status.type === "error" &&
          status.error instanceof PermissionViolationError &&
          status.error.operation === "publish"
        ) {
          refusals = { count: refusals.count + 1, last: status.error.message }
        }
      }
    }),
  )
  return Effect.sync(() => refusals)
})
