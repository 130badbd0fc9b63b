import * as Schema from "effect/Schema"
import type { ConfigProblem } from "../component/Component.ts"

/** The exit code of a usage or configuration error. */
export const CONFIG_INVALID_EXIT_CODE = 2

const ConfigProblemSchema = Schema.Struct({ key: Schema.String, message: Schema.String })

/**
 * The configuration cannot be used. Carries every problem at once, each with the key the user wrote
 * (environment variable, flag or dotted config-file path), in a stable order.
 */
export class ConfigInvalid extends Schema.TaggedError<ConfigInvalid>()("ConfigInvalid", {
  problems: Schema.Array(ConfigProblemSchema),
}) {
  /** Sorts by key, then message, and drops repeats. */
  static of(problems: ReadonlyArray<ConfigProblem>): ConfigInvalid {
    return new ConfigInvalid({ problems: sortProblems(problems) })
  }

  /** One problem per line: `WORKERS: workers must be > 0`. */
  format(): string {
    return this.problems.map((problem) => `${problem.key}: ${problem.message}`).join("\n")
  }

  override get message(): string {
    return this.format()
  }
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Problems sorted by key, then message, without repeats. */
export const sortProblems = (problems: ReadonlyArray<ConfigProblem>): ReadonlyArray<ConfigProblem> => {
  const sorted = [...problems].sort((a, b) => compare(a.key, b.key) || compare(a.message, b.message))
  return sorted.filter(
    (problem, index) =>
      index === 0 || problem.key !== sorted[index - 1]?.key || problem.message !== sorted[index - 1]?.message,
  )
}
