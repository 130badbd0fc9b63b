import { Result } from "effect"
import { parseServiceFlags } from "../../src/cli/ServiceFlags.ts"
import type { ConfigProblem } from "../../src/component/Component.ts"
import type { ConfigInvalid } from "../../src/config/ConfigInvalid.ts"
import { type ConfigSources, type ResolvedConfig, resolveConfigWithOrigins } from "../../src/config/ResolveConfig.ts"
import type { FileMapping } from "../../src/config/ResolveSettings.ts"
import type { ServiceConfig } from "../../src/config/ServiceConfig.ts"
import type { InventoryConfig } from "../../src/processor/inventory/InventoryConfig.ts"
import type { KubeExecConfig } from "../../src/receiver/kube/KubeExecConfig.ts"
import { builtinComponents } from "../../src/service/BuiltinComponents.ts"

export const knownExporterTypes = builtinComponents.exporters.map((exporter) => exporter.type)

export interface Input {
  readonly argv?: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string | undefined>>
  readonly file?: string
  /** A program's config object under the file. */
  readonly base?: FileMapping
}

const sources = (input: Input): ConfigSources => ({
  flags: parseServiceFlags(input.argv ?? []),
  env: input.env ?? {},
  ...(input.file === undefined ? {} : { file: { path: "gpu-serials.yaml", text: input.file } }),
  ...(input.base === undefined ? {} : { base: input.base }),
  catalog: builtinComponents,
})

export const resolve = (input: Input): Result.Result<ResolvedConfig, ConfigInvalid> =>
  resolveConfigWithOrigins(sources(input))

/** An exporter of the pipeline with its section as `config print` writes it. */
export interface ExporterView {
  readonly id: string
  readonly type: string
  readonly module?: string
  readonly section: unknown
}

/** The effective config, with the receiver's and the processor's configs at hand and each exporter's section. */
export interface ConfigView extends Omit<ServiceConfig, "exporters"> {
  readonly kubeExec: KubeExecConfig
  readonly inventory: InventoryConfig
  readonly exporters: ReadonlyArray<ExporterView>
}

export const configOf = (input: Input): ConfigView => {
  const resolved = resolve(input)
  if (Result.isFailure(resolved)) throw new Error(`unexpected problems:\n${resolved.failure.format()}`)
  const { config, file } = resolved.success
  const sections = (file.exporters ?? {}) as FileMapping
  return {
    ...config,
    kubeExec: config.receivers[0]?.config as KubeExecConfig,
    inventory: config.processors[0]?.config as InventoryConfig,
    exporters: config.exporters.map((exporter) =>
      "module" in exporter ? exporter : { id: exporter.id, type: exporter.type, section: sections[exporter.id] },
    ),
  }
}

export const problemsOf = (input: Input): ReadonlyArray<ConfigProblem> => {
  const resolved = resolve(input)
  if (Result.isSuccess(resolved)) throw new Error("expected problems, got a valid config")
  return resolved.failure.problems
}

export const invalidOf = (input: Input): ConfigInvalid => {
  const resolved = resolve(input)
  if (Result.isSuccess(resolved)) throw new Error("expected problems, got a valid config")
  return resolved.failure
}
