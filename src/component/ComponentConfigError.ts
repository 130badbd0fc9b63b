import * as Schema from "effect/Schema"
/** The component sections of a config have problems; all of them, each with the key that caused it. */
export class ComponentConfigError extends Schema.TaggedError<ComponentConfigError>()("ComponentConfigError", {
  problems: Schema.Array(Schema.Struct({ key: Schema.String, message: Schema.String })),
}) {
  override get message(): string {
    return this.problems.map((problem) => `${problem.key}: ${problem.message}`).join("\n")
  }
}
