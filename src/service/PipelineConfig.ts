import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { ConfigProblem } from "../component/Component.ts"
import { ConfigInvalid } from "../config/ConfigInvalid.ts"
import { type ConfigSources, type ResolvedConfig, resolvePipeline } from "../config/ResolveConfig.ts"
import { valueAt } from "../config/ResolveSettings.ts"
import { builtinComponents } from "./BuiltinComponents.ts"
import { ComponentRegistry, type ConfiguredExporter } from "./ComponentRegistry.ts"
import { storeProblem } from "./InventoryStoreHost.ts"

/** The effective configuration with its exporters ready to create, third-party ones validated by their factories. */
export interface LoadedServiceConfig extends ResolvedConfig {
  readonly exporters: ReadonlyArray<ConfiguredExporter>
}

/** What the configuration of the service is made from, for this distribution's components. */
export interface PipelineSources extends Omit<ConfigSources, "catalog"> {
  /** The folder relative `module` paths of third-party exporters resolve against (the config file's). */
  readonly baseDir: string
}

/** The store each processor names must exist in this pipeline, as `run` would find it at start. */
const storeProblems = (resolved: ResolvedConfig): ReadonlyArray<ConfigProblem> =>
  resolved.config.processors.flatMap((processor) => {
    const setting = builtinComponents.processors.find((factory) => factory.type === processor.type)?.storeSetting
    if (setting === undefined) return []
    const path = `processors.${processor.id}.${setting.key}`
    const name = setting.type.fromFile(valueAt(resolved.file, path), true)
    if (Result.isFailure(name)) return []
    const problem = storeProblem(
      name.success,
      builtinComponents.stores,
      resolved.config.exporters,
      resolved.config.receivers,
    )
    return problem === undefined ? [] : [{ key: resolved.origins[path]?.key ?? path, message: problem }]
  })

/**
 * The service's configuration entry point: resolves flags > environment > config file > a program's own
 * config object (`base`, in the file's layout) > defaults for the built-in components, has every
 * third-party exporter's factory validate its section, and checks what the pipeline's parts name of each
 * other (the inventory's store). Fails with every problem at once, keyed as the user wrote them. `run`,
 * `config validate` and the demo load their configuration here; the result goes to `runGpuSerialsService`.
 */
export const loadPipelineConfig = Effect.fn("loadPipelineConfig")(function* (sources: PipelineSources) {
  const registry = yield* ComponentRegistry
  const { baseDir, ...config } = sources
  const { result, modules } = resolvePipeline({ ...config, catalog: builtinComponents })
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
