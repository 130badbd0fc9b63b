import { Effect } from "effect"
import { CliIo } from "./CliIo.ts"
import type { UsageProblem } from "./CommandLine.ts"
import { ExitCode } from "./ExitCode.ts"
import { terminalText } from "./TerminalText.ts"

/** Prints every problem of a command line at once (arguments they quote escaped), then the usage; exit code 2. */
export const usageFailure = (command: string, problems: ReadonlyArray<UsageProblem>, usage: string) =>
  Effect.gen(function* () {
    const io = yield* CliIo
    const lines = problems.map((problem) => `gpu-serials ${command}: ${terminalText(problem.message)}\n`).join("")
    yield* io.stderr(`${lines}\n${usage}`)
    return ExitCode.usage
  })
