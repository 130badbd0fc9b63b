import * as Schema from "effect/Schema"
/** A component could not be built or started (a sink unreachable at start is not this: it retries). */
export class ComponentStartError extends Schema.TaggedError<ComponentStartError>()("ComponentStartError", {
  component: Schema.String,
  message: Schema.String,
}) {}
