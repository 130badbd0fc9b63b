import { dirname, resolve } from "node:path"
import { Effect, Result } from "effect"
import type { ConfigProblem } from "../component/Component.ts"
import { ConfigInvalid } from "../config/ConfigInvalid.ts"
import { CONFIG_ENV, CONFIG_FLAG, configFilePath, parseFlags, serviceFlags } from "../config/Flags.ts"
import { type ConfigSources, type ResolvedConfig, resolvePipeline } from "../config/ResolveConfig.ts"
import { valueAt } from "../config/ResolveSettings.ts"
import { ComponentRegistry, type ConfiguredExporter } from "../pipeline/ComponentRegistry.ts"
import { builtinComponents } from "../service/BuiltinComponents.ts"
import { storeProblem } from "../service/InventoryStoreHost.ts"
import { CliIo } from "./CliIo.ts"
import { readConfigFileText } from "./ConfigFileText.ts"

/** The effective configuration with its exporters ready to create, third-party ones validated by their factories. */
export interface LoadedServiceConfig extends ResolvedConfig {
  readonly exporters: ReadonlyArray<ConfiguredExporter>
}

/**
 * Reads the config file (if one is named, within its size cap), resolves flags > environment > file >
 * defaults (a program's own config object, `base`, under the file; `env` in place of the process's), and has every exporter factory validate its section. Fails with every problem at once. Both
 * `config validate` and `run` load their configuration here, so validate refuses what run would.
 */
export const loadServiceConfig = Effect.fn("loadServiceConfig")(function* (
  argv: ReadonlyArray<string>,
  embedding: Partial<Pick<ConfigSources, "base" | "env">> = {},
) {
  const io = yield* CliIo
  const env = embedding.env ?? io.env
  const registry = yield* ComponentRegistry
  const flags = serviceFlags(builtinComponents)
  const path = configFilePath(argv, env, flags)
  const absolutePath = path === undefined ? undefined : resolve(io.cwd, path)
  const text =
    absolutePath === undefined
      ? undefined
      : yield* readConfigFileText(absolutePath).pipe(
          Effect.mapError((unreadable) =>
            ConfigInvalid.of([
              {
                key: parseFlags(argv, flags).configPath === undefined ? CONFIG_ENV : CONFIG_FLAG,
                message: `cannot read config file ${path}: ${unreadable.reason}`,
              },
            ]),
          ),
        )
  const { result, modules } = resolvePipeline({
    argv,
    env,
    ...(embedding.base === undefined ? {} : { base: embedding.base }),
    ...(absolutePath === undefined || text === undefined ? {} : { file: { path: absolutePath, text } }),
    catalog: builtinComponents,
  })
  const baseDir = absolutePath === undefined ? io.cwd : dirname(absolutePath)
  if (Result.isFailure(result)) {
    // The third-party exporters' own problems are reported with the rest.
    const modular = yield* registry.resolveExporters(modules, { baseDir }).pipe(Effect.flip, Effect.option)
    const extra = modular._tag === "Some" ? modular.value.problems : []
    return yield* ConfigInvalid.of([...result.failure.problems, ...extra])
  }
  const exporters = yield* registry
    .resolveExporters(result.success.config.exporters, { baseDir })
    .pipe(Effect.mapError((error) => ConfigInvalid.of(error.problems)))
  const stores = storeProblems(result.success)
  if (stores.length > 0) return yield* ConfigInvalid.of(stores)
  return { ...result.success, exporters } satisfies LoadedServiceConfig
})

/** The store each processor names must exist in this pipeline, as `run` would find it at start. */
const storeProblems = (resolved: ResolvedConfig): ReadonlyArray<ConfigProblem> =>
  resolved.config.processors.flatMap((processor) => {
    const setting = builtinComponents.processors.find((factory) => factory.type === processor.type)?.storeSetting
    if (setting === undefined) return []
    const path = `processors.${processor.id}.${setting.key}`
    const name = setting.type.fromFile(valueAt(resolved.file, path), true)
    if (Result.isFailure(name)) return []
    const problem = storeProblem(name.success, builtinComponents.stores, resolved.config.exporters)
    return problem === undefined ? [] : [{ key: resolved.origins[path]?.key ?? path, message: problem }]
  })
