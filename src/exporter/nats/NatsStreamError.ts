import { Schema } from "effect"

/** The JetStream stream could not be looked up, created or updated. */
export class NatsStreamError extends Schema.TaggedError<NatsStreamError>()("NatsStreamError", {
  stream: Schema.String,
  message: Schema.String,
}) {}
