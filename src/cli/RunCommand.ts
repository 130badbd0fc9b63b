import { Effect } from "effect"
import { serviceFlags } from "../config/Flags.ts"
import * as JsonLogger from "../log/JsonLogger.ts"
import { redactUrlsIn } from "../log/UrlRedaction.ts"
import { builtinComponents } from "../service/BuiltinComponents.ts"
import { runGpuSerialsService } from "../service/GpuSerialsService.ts"
import type { LoadedServiceConfig } from "../service/PipelineConfig.ts"
import { CliIo } from "./CliIo.ts"
import { reportInvalidConfig } from "./ConfigCommand.ts"
import { ExitCode } from "./ExitCode.ts"
import { loadServiceConfig } from "./ServiceConfigLoader.ts"
import { settingFlagsHelp as settingFlagsHelpOf } from "./SettingFlagsHelp.ts"
import { serviceVersion } from "./Version.ts"

/** The flags of the service's settings and of the components this build has. */
export const runFlags = serviceFlags(builtinComponents)

/** The setting flags of `run` and `demo`, one entry each. */
export const settingFlagsHelp = settingFlagsHelpOf(runFlags)

export const runUsage = `Usage: gpu-serials run [--config FILE] [SETTING FLAGS]

Runs the service: watches the device-plugin pods, reads nvidia-smi in them and exports GPU records,
until SIGTERM or SIGINT, then shuts down within SHUTDOWN_TIMEOUT and exits 0 (a second signal exits
at once with 143 or 130). Settings come from flags, then environment variables, then the config
file, then defaults.

Setting flags:
${settingFlagsHelp}

Settings without a flag (secrets, queue and retry settings) are read from their environment
variable or the config file; the configuration reference in the README lists every setting.
`

/** Runs the service with a loaded configuration; reports a start failure and answers the exit code. */
export const serveWith = Effect.fn("serveWith")(function* (
  loaded: LoadedServiceConfig,
  hooks: Pick<Parameters<typeof runGpuSerialsService>[0], "tap" | "tapEvents" | "onListening"> = {},
) {
  const io = yield* CliIo
  return yield* runGpuSerialsService({
    config: loaded.config,
    exporters: loaded.exporters,
    serviceVersion,
    ...hooks,
  }).pipe(
    Effect.provide(JsonLogger.layer({ level: loaded.config.telemetry.logLevel })),
    Effect.as(ExitCode.ok),
    Effect.catch((error) =>
      io
        .stderr(`gpu-serials: the service could not start: ${redactUrlsIn(error.message)}\n`)
        .pipe(Effect.as(ExitCode.failure)),
    ),
  )
})

/** `gpu-serials run`. */
export const runCommand = Effect.fn("RunCommand")(function* (argv: ReadonlyArray<string>) {
  return yield* loadServiceConfig(argv).pipe(
    Effect.flatMap((loaded) => serveWith(loaded)),
    Effect.catchTag("ConfigInvalid", reportInvalidConfig),
  )
})
