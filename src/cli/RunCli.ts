import { Cause, Effect, Exit, Fiber, Layer } from "effect"
import { builtinRegistryLayer } from "../component/BuiltinComponents.ts"
import * as JsonLogger from "../log/JsonLogger.ts"
import { redactUrlsIn } from "../log/UrlRedaction.ts"
import { CliIo } from "./CliIo.ts"
import { ExitCode } from "./ExitCode.ts"
import { main } from "./Main.ts"

const cliLayer = Layer.mergeAll(CliIo.layer, builtinRegistryLayer, JsonLogger.layer({ level: "info" }))

/**
 * The process edge: runs `main`, interrupts it on SIGINT/SIGTERM (its scopes close, so a service shuts
 * down gracefully and exits 0), and sets the exit code only once stdout and stderr have taken everything.
 */
export const runCli = (argv: ReadonlyArray<string>): void => {
  const fiber = Effect.runFork(main(argv).pipe(Effect.provide(cliLayer)))
  const interrupt = () => {
    Effect.runFork(Fiber.interrupt(fiber))
  }
  process.once("SIGINT", interrupt)
  process.once("SIGTERM", interrupt)
  fiber.addObserver((exit) => {
    process.removeListener("SIGINT", interrupt)
    process.removeListener("SIGTERM", interrupt)
    process.exitCode = exitCodeOf(exit)
    if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
      process.stderr.write(
        `gpu-serials: unexpected failure: ${redactUrlsIn(Cause.pretty(exit.cause).split("\n")[0] ?? "")}\n`,
      )
    }
  })
}

const exitCodeOf = (exit: Exit.Exit<number, unknown>): number => {
  if (Exit.isSuccess(exit)) return exit.value
  return Cause.hasInterruptsOnly(exit.cause) ? ExitCode.ok : ExitCode.failure
}
