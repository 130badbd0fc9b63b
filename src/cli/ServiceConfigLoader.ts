import { dirname, resolve } from "node:path"
import { Effect, Result } from "effect"
import { ComponentRegistry, type ConfiguredExporter } from "../component/ComponentRegistry.ts"
import { ConfigInvalid } from "../config/ConfigInvalid.ts"
import { CONFIG_ENV, CONFIG_FLAG, configFilePath, parseFlags } from "../config/Flags.ts"
import { exporterProblemKey, type ResolvedConfig, resolveConfigWithOrigins } from "../config/ResolveConfig.ts"
import { CliIo } from "./CliIo.ts"
import { readConfigFileText } from "./ConfigFileText.ts"

/** The effective configuration with its exporters validated by their factories, ready to build a pipeline. */
export interface LoadedServiceConfig extends ResolvedConfig {
  readonly exporters: ReadonlyArray<ConfiguredExporter>
}

/**
 * Reads the config file (if one is named, within its size cap), resolves flags > environment > file >
 * defaults, and has every exporter factory validate its section. Fails with every problem at once. Both
 * `config validate` and `run` load their configuration here, so validate refuses what run would.
 */
export const loadServiceConfig = Effect.fn("loadServiceConfig")(function* (argv: ReadonlyArray<string>) {
  const io = yield* CliIo
  const registry = yield* ComponentRegistry
  const path = configFilePath(argv, io.env)
  const absolutePath = path === undefined ? undefined : resolve(io.cwd, path)
  const text =
    absolutePath === undefined
      ? undefined
      : yield* readConfigFileText(absolutePath).pipe(
          Effect.mapError((unreadable) =>
            ConfigInvalid.of([
              {
                key: parseFlags(argv).configPath === undefined ? CONFIG_ENV : CONFIG_FLAG,
                message: `cannot read config file ${path}: ${unreadable.reason}`,
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
