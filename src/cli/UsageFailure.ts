import { Effect } from "effect"
import { CliIo } from "./CliIo.ts"
import type { UsageProblem } from "./CommandLine.ts"
import { ExitCode } from "./ExitCode.ts"

/** Prints every problem of a command line at once, then the command's usage; exit code 2. */
export const usageFailure = (command: string, problems: ReadonlyArray<UsageProblem>, usage: string) =>
  Effect.gen(function* () {
    const io = yield* CliIo
    const lines = problems.map((problem) => `gpu-serials ${command}: ${problem.message}\n`).join("")
    yield* io.stderr(`${lines}\n${usage}`)
    return ExitCode.usage
  })
