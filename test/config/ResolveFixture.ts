import { Result } from "effect"
import type { ConfigProblem } from "../../src/component/Component.ts"
import type { ConfigInvalid } from "../../src/config/ConfigInvalid.ts"
import { type ConfigSources, type ResolvedConfig, resolveConfigWithOrigins } from "../../src/config/ResolveConfig.ts"
import type { ServiceConfig } from "../../src/config/ServiceConfig.ts"

export const knownExporterTypes = ["stdout", "otlp", "nats", "http", "postgres"]

export interface Input {
  readonly argv?: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string | undefined>>
  readonly file?: string
}

const sources = (input: Input): ConfigSources => ({
  argv: input.argv ?? [],
  env: input.env ?? {},
  ...(input.file === undefined ? {} : { file: { path: "gpu-serials.yaml", text: input.file } }),
  knownExporterTypes,
})

export const resolve = (input: Input): Result.Result<ResolvedConfig, ConfigInvalid> =>
  resolveConfigWithOrigins(sources(input))

export const configOf = (input: Input): ServiceConfig => {
  const resolved = resolve(input)
  if (Result.isFailure(resolved)) throw new Error(`unexpected problems:\n${resolved.failure.format()}`)
  return resolved.success.config
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
