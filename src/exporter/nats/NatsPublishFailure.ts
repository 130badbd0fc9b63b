import { JetStreamApiError } from "@nats-io/jetstream"
import {
  AuthorizationError,
  InvalidArgumentError,
  InvalidSubjectError,
  PermissionViolationError,
} from "@nats-io/transport-node"
import { redactUrlsIn } from "../../log/UrlRedaction.ts"
import { SinkError } from "../Sink.ts"

const reason = (cause: unknown): string => redactUrlsIn(cause instanceof Error ? cause.message : String(cause))

/**
 * A failed publish as a sink failure. Timeouts, no responders (the stream's server is away),
 * lost or draining connections and JetStream's own 503s may succeed later and are retried; a
 * subject or permission the server refuses, or a JetStream API error, never will.
 */
export const publishFailure = (cause: unknown): SinkError => {
  const permanent =
    cause instanceof InvalidSubjectError ||
    cause instanceof InvalidArgumentError ||
    cause instanceof PermissionViolationError ||
    cause instanceof AuthorizationError ||
    (cause instanceof JetStreamApiError && cause.status !== 503)
  return new SinkError({ message: `NATS publish failed: ${reason(cause)}`, retryable: !permanent })
}
