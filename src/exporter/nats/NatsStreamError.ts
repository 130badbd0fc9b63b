import * as Schema from "effect/Schema"
/**
 * The JetStream stream could not be looked up, created or updated, or does not take the exporter's
 * messages. `permanent`: NATS refused it for a reason that retrying cannot change (overlapping
 * subjects, a config or storage it refuses, a permission the user lacks, a stream that must exist
 * and does not); otherwise it may pass (a timeout, JetStream not up yet).
 */
export class NatsStreamError extends Schema.TaggedError<NatsStreamError>()("NatsStreamError", {
  stream: Schema.String,
  message: Schema.String,
  permanent: Schema.Boolean,
}) {}
