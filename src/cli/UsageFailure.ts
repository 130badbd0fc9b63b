import * as Effect from "effect/Effect"
import { CliIo } from "./CliIo.ts"
import type { CommandLineProblem } from "./CommandLine.ts"
import { ExitCode } from "./ExitCode.ts"
import { terminalText } from "./TerminalText.ts"

/** A wrong command line: the message names the option or argument at fault. */
export interface UsageProblem {
  readonly message: string
}

/** A command's own option problem, worded for its usage failure. */
export const optionProblem = (problem: CommandLineProblem): UsageProblem => {
  switch (problem.kind) {
    case "unknown":
      return { message: `unknown option ${problem.option}` }
    case "needs-value":
      return { message: `option ${problem.option} needs a value` }
    case "takes-no-value":
      return { message: `option ${problem.option} takes no value` }
    case "unexpected-argument":
      return { message: `unexpected argument ${problem.argument}` }
  }
}

/** Prints every problem of a command line at once (arguments they quote escaped), then the usage; exit code 2. */
export const usageFailure = (command: string, problems: ReadonlyArray<UsageProblem>, usage: string) =>
  Effect.gen(function* () {
    const io = yield* CliIo
    const lines = problems.map((problem) => `gpu-serials ${command}: ${terminalText(problem.message)}\n`).join("")
    yield* io.stderr(`${lines}\n${usage}`)
    return ExitCode.usage
  })
