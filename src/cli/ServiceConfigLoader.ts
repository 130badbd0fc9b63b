import { readFile } from "node:fs/promises"
import { dirname, resolve } from "node:path"
import { Effect, Result } from "effect"
import { ComponentRegistry, type ConfiguredExporter } from "../component/ComponentRegistry.ts"
import { ConfigInvalid } from "../config/ConfigInvalid.ts"
import { CONFIG_ENV, CONFIG_FLAG, configFilePath } from "../config/Flags.ts"
import { exporterProblemKey, type ResolvedConfig, resolveConfigWithOrigins } from "../config/ResolveConfig.ts"
import { CliIo } from "./CliIo.ts"

/** The effective configuration with its exporters validated by their factories, ready to build a pipeline. */
export interface LoadedServiceConfig extends ResolvedConfig {
  readonly exporters: ReadonlyArray<ConfiguredExporter>
}

const fileReadTimeout = "10 seconds"

/**
 * Reads the config file (if one is named), resolves flags > environment > file > defaults, and has every
 * exporter factory validate its section. Fails with every problem at once.
 */
export const loadServiceConfig = Effect.fn("loadServiceConfig")(function* (argv: ReadonlyArray<string>) {
  const io = yield* CliIo
  const registry = yield* ComponentRegistry
  const path = configFilePath(argv, io.env)
  const absolutePath = path === undefined ? undefined : resolve(io.cwd, path)
  const text =
    absolutePath === undefined
      ? undefined
      : yield* Effect.tryPromise(() => readFile(absolutePath, "utf8")).pipe(
          Effect.timeout(fileReadTimeout),
          Effect.mapError((cause) =>
            ConfigInvalid.of([
              {
                key: argv.some((argument) => argument.startsWith(CONFIG_FLAG)) ? CONFIG_FLAG : CONFIG_ENV,
                message: `cannot read config file ${path}: ${fileErrorText(cause)}`,
              },
            ]),
          ),
        )
  const resolved = resolveConfigWithOrigins({
    argv,
    env: io.env,
    ...(absolutePath === undefined || text === undefined ? {} : { file: { path: absolutePath, text } }),
    knownExporterTypes: registry.knownTypes("exporter"),
  })
  if (Result.isFailure(resolved)) return yield* resolved.failure
  const { config, origins } = resolved.success
  const exporters = yield* registry
    .resolveExporters(config.exporters, { baseDir: absolutePath === undefined ? io.cwd : dirname(absolutePath) })
    .pipe(
      Effect.mapError((error) =>
        ConfigInvalid.of(
          error.problems.map((problem) => ({
            key: relocate(origins, problem.key),
            message: problem.message,
          })),
        ),
      ),
    )
  return { config, origins, exporters } satisfies LoadedServiceConfig
})

/** A factory's problem key (`exporters.<id>.<key>`) as the user wrote it: env var, flag or file path. */
const relocate = (origins: ResolvedConfig["origins"], key: string): string => {
  const match = /^exporters\.([^.]+(?:\/[^.]+)?)(?:\.(.*))?$/.exec(key)
  if (match === null) return key
  return exporterProblemKey(origins, match[1] ?? "", match[2] ?? "")
}

const fileErrorText = (cause: unknown): string => {
  const error = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause
  if (error instanceof Error && "code" in error && error.code === "ENOENT") return "no such file"
  if (error instanceof Error && "code" in error && error.code === "EACCES") return "permission denied"
  return error instanceof Error ? error.message : "read timed out"
}
