import { isAbsolute, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { shortMessage } from "../log/ShortMessage.ts"
import type { ExporterFactory } from "../pipeline/Exporter.ts"

/** A module named in the config could not be imported or does not export an exporter factory. */
export class ExporterModuleError extends Schema.TaggedError<ExporterModuleError>()("ExporterModuleError", {
  module: Schema.String,
  message: Schema.String,
}) {}

const importTimeout = "30 seconds"

/**
 * What `import()` receives for a `module` value: a path (`./kafka.ts`, `../plugins/kafka.js`,
 * `/opt/kafka.js`) is resolved against the config file's folder; a `file:` URL is used as is;
 * anything else is a package name, resolved like the service's own dependencies.
 */
export const importSpecifier = (module: string, baseDir: string): string => {
  if (module.startsWith("file:")) return module
  if (isAbsolute(module)) return pathToFileURL(module).href
  if (module === "." || module === ".." || module.startsWith("./") || module.startsWith("../")) {
    return pathToFileURL(resolve(baseDir, module)).href
  }
  return module
}

/** Why `candidate` is not an exporter factory; empty when it is one. */
export const factoryShapeProblems = (candidate: unknown): ReadonlyArray<string> => {
  if (!Predicate.isObject(candidate)) return ["it is not an object"]
  const problems: Array<string> = []
  if (!Predicate.hasProperty(candidate, "kind") || candidate.kind !== "exporter")
    problems.push('kind must be "exporter"')
  if (!Predicate.hasProperty(candidate, "type") || !Predicate.isString(candidate.type) || candidate.type === "") {
    problems.push("type must be a non-empty string")
  }
  if (!Predicate.hasProperty(candidate, "defaultConfig")) problems.push("defaultConfig is missing")
  if (!Predicate.hasProperty(candidate, "validate") || !Predicate.isFunction(candidate.validate)) {
    problems.push("validate must be a function")
  }
  if (!Predicate.hasProperty(candidate, "create") || !Predicate.isFunction(candidate.create)) {
    problems.push("create must be a function")
  }
  return problems
}

const isExporterFactory = (candidate: unknown): candidate is ExporterFactory =>
  factoryShapeProblems(candidate).length === 0

/** The first line of an import's failure (a syntax error quotes the source after it), short. */
const describeFailure = (cause: unknown): string => {
  const message = cause instanceof Error ? cause.message : String(cause)
  return shortMessage(message.split("\n", 1)[0] ?? message)
}

/**
 * Imports a third-party exporter module and returns its factory: the export named `factory`, or
 * else the default export. The module only needs the contract's shape, not this package's code.
 */
export const load = Effect.fn("ExporterModule.load")(function* (
  module: string,
  baseDir: string,
): Effect.fn.Return<ExporterFactory, ExporterModuleError> {
  const specifier = importSpecifier(module, baseDir)
  const namespace: unknown = yield* Effect.tryPromise({
    try: () => import(specifier),
    catch: (cause) => new ExporterModuleError({ module, message: `cannot be loaded: ${describeFailure(cause)}` }),
  }).pipe(
    Effect.timeout(importTimeout),
    Effect.catchTag("TimeoutError", () =>
      Effect.fail(new ExporterModuleError({ module, message: `did not finish loading within ${importTimeout}` })),
    ),
  )
  const exported =
    Predicate.hasProperty(namespace, "factory") && namespace.factory !== undefined
      ? namespace.factory
      : Predicate.hasProperty(namespace, "default")
        ? namespace.default
        : undefined
  if (exported === undefined) {
    return yield* new ExporterModuleError({
      module,
      message: 'exports no exporter factory (expected an export named "factory" or a default export)',
    })
  }
  if (!isExporterFactory(exported)) {
    return yield* new ExporterModuleError({
      module,
      message: `does not export an exporter factory: ${factoryShapeProblems(exported).join("; ")}`,
    })
  }
  return exported
})

/** Why what a third-party factory created is not a running exporter; empty when it is one. */
export const exporterShapeProblems = (candidate: unknown): ReadonlyArray<string> => {
  if (!Predicate.isObject(candidate)) return ["it is not an object"]
  const problems: Array<string> = []
  if (!Predicate.hasProperty(candidate, "export") || !Predicate.isFunction(candidate.export)) {
    problems.push("export must be a function")
  }
  if (!Predicate.hasProperty(candidate, "flush") || !Predicate.isFunction(candidate.flush)) {
    problems.push("flush must be a function")
  }
  if (!Predicate.hasProperty(candidate, "health") || !Effect.isEffect(candidate.health)) {
    problems.push("health must be an Effect")
  }
  if (!Predicate.hasProperty(candidate, "stats") || !Effect.isEffect(candidate.stats)) {
    problems.push("stats must be an Effect")
  }
  return problems
}
