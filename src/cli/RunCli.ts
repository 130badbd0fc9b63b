import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as JsonLogger from "../log/JsonLogger.ts"
import { redactUrlsIn } from "../log/UrlRedaction.ts"
import { builtinRegistryLayer } from "../service/BuiltinComponents.ts"
import { CliIo } from "./CliIo.ts"
import { ExitCode } from "./ExitCode.ts"
import { main } from "./Main.ts"

const cliLayer = Layer.mergeAll(CliIo.layer, builtinRegistryLayer, JsonLogger.layer({ level: "info" }))

/**
 * How long the process may stay once the command has finished and its output is written: a socket a
 * sink never answered (a metrics push to a hung collector) must not keep it past its shutdown budget.
 */
const exitGraceMs = 1_000

/** Conventional exit codes of a process stopped by a signal, 128 + its number. */
const stoppedBy = { SIGINT: ExitCode.interrupted, SIGTERM: ExitCode.terminated } as const

/**
 * The process edge: runs `main`, interrupts it on the first SIGINT/SIGTERM (its scopes close, so a
 * service shuts down gracefully and exits 0), and sets the exit code; once stdout and stderr have taken
 * everything, whatever still holds the process (a request no one answers) is given `exitGraceMs`. A
 * second signal during that shutdown stops the process at once with 130 or 143.
 */
export const runCli = (argv: ReadonlyArray<string>): void => {
  const fiber = Effect.runFork(main(argv).pipe(Effect.provide(cliLayer)))
  let stopping = false
  const onSignal = (signal: keyof typeof stoppedBy) => {
    if (!stopping) {
      stopping = true
      Effect.runFork(Fiber.interrupt(fiber))
      return
    }
    const code = stoppedBy[signal]
    Effect.runSync(
      Effect.logError("second signal during shutdown, exiting at once").pipe(
        Effect.annotateLogs({ signal, exitCode: code }),
        Effect.provide(JsonLogger.layer({ level: "error" })),
      ),
    )
    process.exit(code)
  }
  const interrupt = () => onSignal("SIGINT")
  const terminate = () => onSignal("SIGTERM")
  process.on("SIGINT", interrupt)
  process.on("SIGTERM", terminate)
  fiber.addObserver((exit) => {
    process.removeListener("SIGINT", interrupt)
    process.removeListener("SIGTERM", terminate)
    const code = exitCodeOf(exit)
    process.exitCode = code
    if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
      process.stderr.write(
        `gpu-serials: unexpected failure: ${redactUrlsIn(Cause.pretty(exit.cause).split("\n")[0] ?? "")}\n`,
      )
    }
    exitOnceWritten(code)
  })
}

/** Exits with `code` `exitGraceMs` after stdout and stderr took what was written, unless the process ended before. */
const exitOnceWritten = (code: number): void => {
  let streams = 2
  const written = () => {
    streams -= 1
    if (streams === 0) setTimeout(() => process.exit(code), exitGraceMs).unref()
  }
  process.stdout.write("", written)
  process.stderr.write("", written)
}

const exitCodeOf = (exit: Exit.Exit<number, unknown>): number => {
  if (Exit.isSuccess(exit)) return exit.value
  return Cause.hasInterruptsOnly(exit.cause) ? ExitCode.ok : ExitCode.failure
}
