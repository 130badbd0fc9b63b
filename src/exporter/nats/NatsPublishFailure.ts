import { SinkError } from "../exporterhelper/Sink.ts"
import { isPermanent, natsReason } from "./NatsPermanentError.ts"

/**
 * A failed publish as a sink failure. Timeouts, no responders (the stream's server is away),
 * lost or draining connections and JetStream's own 503s may succeed later and are retried; a
 * subject or permission the server refuses, or a JetStream API error, never will.
 */
export const publishFailure = (cause: unknown): SinkError =>
  new SinkError({ message: `NATS publish failed: ${natsReason(cause)}`, retryable: !isPermanent(cause) })
