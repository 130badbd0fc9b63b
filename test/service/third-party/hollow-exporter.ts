// A module with a well-shaped factory whose `create` returns something that is not an exporter.
import { Effect, Result } from "effect"

export const factory = {
  kind: "exporter",
  type: "hollow",
  defaultConfig: {},
  validate: () => Result.succeed({}),
  create: () => Effect.succeed({ export: "nothing" }),
}
