import { Exit, Result, Schema, SchemaIssue } from "effect"
import type { ConfigProblem } from "./Component.ts"

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => {
    switch (issue._tag) {
      case "UnexpectedKey":
        return "unknown key"
      case "MissingKey":
        return "is required"
      case "InvalidType":
        return issue.ast._tag === "Objects" ? "must be a mapping" : SchemaIssue.defaultLeafHook(issue)
      default:
        return SchemaIssue.defaultLeafHook(issue)
    }
  },
})

const problemsOf = (issue: SchemaIssue.Issue): ReadonlyArray<ConfigProblem> =>
  formatter(issue).issues.map((entry) => ({
    key: (entry.path ?? [])
      .map((segment) => (typeof segment === "object" ? String(segment.key) : String(segment)))
      .join("."),
    message: entry.message,
  }))

/**
 * Turns the Schema of a component's config section into the factory's `validate`: every problem at
 * once, keyed relative to the section; unknown keys are problems; an absent section (`undefined`
 * or `null`, as YAML gives for `stdout:`) means "all defaults".
 */
export const sectionValidator =
  <Config>(schema: Schema.Codec<Config, unknown>) =>
  (section: unknown): Result.Result<Config, ReadonlyArray<ConfigProblem>> => {
    const exit = Schema.decodeUnknownExit(schema)(section ?? {}, { errors: "all", onExcessProperty: "error" })
    if (Exit.isSuccess(exit)) return Result.succeed(exit.value)
    const problems = exit.cause.reasons.flatMap((reason) =>
      reason._tag === "Fail" ? problemsOf(reason.error.issue) : [{ key: "", message: String(reason) }],
    )
    return Result.fail(problems)
  }

/** The config a section schema decodes from an empty section: the factory's `defaultConfig`. */
export const sectionDefaults = <Config>(schema: Schema.Codec<Config, unknown>): Config =>
  Schema.decodeUnknownSync(schema)({})
