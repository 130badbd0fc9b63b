import { dirname, resolve } from "node:path"
import * as Effect from "effect/Effect"
import { ConfigInvalid } from "../config/ConfigInvalid.ts"
import type { ConfigSources } from "../config/ResolveConfig.ts"
import { builtinComponents } from "../service/BuiltinComponents.ts"
import { loadPipelineConfig } from "../service/PipelineConfig.ts"
import { CliIo } from "./CliIo.ts"
import { readConfigFileText } from "./ConfigFileText.ts"
import { CONFIG_ENV, CONFIG_FLAG, configFilePath, parseFlags, serviceFlags } from "./ServiceFlags.ts"

/**
 * Reads the config file named by `--config` or `$GPU_SERIALS_CONFIG` (within its size cap) and loads the
 * configuration from it, the environment (`env` in place of the process's), the flags and a program's own
 * config object (`base`), through `loadPipelineConfig`. Both `config validate` and `run` load their
 * configuration here, so validate refuses what run would.
 */
export const loadServiceConfig = Effect.fn("loadServiceConfig")(function* (
  argv: ReadonlyArray<string>,
  embedding: Partial<Pick<ConfigSources, "base" | "env">> = {},
) {
  const io = yield* CliIo
  const env = embedding.env ?? io.env
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
  return yield* loadPipelineConfig({
    flags: parseFlags(argv, flags),
    env,
    ...(embedding.base === undefined ? {} : { base: embedding.base }),
    ...(absolutePath === undefined || text === undefined ? {} : { file: { path: absolutePath, text } }),
    baseDir: absolutePath === undefined ? io.cwd : dirname(absolutePath),
  })
})
