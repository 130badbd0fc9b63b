import * as Effect from "effect/Effect"
import * as JsonLogger from "../../../log/JsonLogger.ts"
import { redactUrlsIn } from "../../../log/UrlRedaction.ts"
import type { ComponentRegistry } from "../../../service/ComponentRegistry.ts"
import { runGpuSerialsService } from "../../../service/GpuSerialsService.ts"
import type { LoadedServiceConfig } from "../../../service/PipelineConfig.ts"
import { CliIo } from "../../CliIo.ts"
import { ExitCode } from "../../ExitCode.ts"
import { loadServiceConfig } from "../../ServiceConfigLoader.ts"
import { serviceVersion } from "../../Version.ts"
import { reportInvalidConfig } from "../config/ConfigCommand.ts"

/**
 * Runs the service with a loaded configuration, with the built-in components unless `registry` names
 * others; reports a start failure and answers the exit code.
 */
export const serveWith = Effect.fn("serveWith")(function* (
  loaded: LoadedServiceConfig,
  registry?: ComponentRegistry["Service"],
) {
  const io = yield* CliIo
  return yield* runGpuSerialsService({
    config: loaded.config,
    exporters: loaded.exporters,
    serviceVersion,
    ...(registry === undefined ? {} : { registry }),
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
