import * as Schema from "effect/Schema"
/** A connection to NATS could not be made: servers unreachable, credentials unreadable or refused. */
export class NatsConnectError extends Schema.TaggedError<NatsConnectError>()("NatsConnectError", {
  /** The server list, redacted. */
  servers: Schema.String,
  message: Schema.String,
  /** The server refused the credentials: asking again with the same ones cannot help. */
  refused: Schema.optionalKey(Schema.Boolean),
}) {}
