import * as Effect from "effect/Effect"
import type { ConfigInvalid } from "../../../config/ConfigInvalid.ts"
import { printConfig } from "../../../config/PrintConfig.ts"
import { builtinComponents } from "../../../service/BuiltinComponents.ts"
import { CliIo } from "../../CliIo.ts"
import { type CommandLineSpec, parseCommandLine } from "../../CommandLine.ts"
import { ExitCode } from "../../ExitCode.ts"
import { loadServiceConfig } from "../../ServiceConfigLoader.ts"
import { optionProblem, usageFailure } from "../../UsageFailure.ts"

export const configUsage = `Usage: gpu-serials config validate [--config FILE] [SETTING FLAGS]
       gpu-serials config print [--show-origin] [--config FILE] [SETTING FLAGS]

  validate       checks the config file, the environment and the flags together; prints every problem
                 with the key that caused it and exits 2, or says the configuration is valid
  print          prints the effective configuration as a config file, secrets redacted
  --show-origin  with print: follows each value with where it came from (default, file, env, flag)

Setting flags are those of 'gpu-serials run' (see gpu-serials run --help).
`

/** The action's own options; every other argument is passed on to the setting flags, in order. */
const printOptions: CommandLineSpec = { options: { "show-origin": "switch" }, others: "passed-on" }
const validateOptions: CommandLineSpec = { options: {}, others: "passed-on" }

/** `gpu-serials config validate|print`. */
export const configCommand = Effect.fn("ConfigCommand")(function* (argv: ReadonlyArray<string>) {
  const io = yield* CliIo
  const [action, ...rest] = argv
  if (action !== "validate" && action !== "print") {
    const problem = action === undefined ? "config needs validate or print" : `unknown config action ${action}`
    return yield* usageFailure("config", [{ message: problem }], configUsage)
  }
  const commandLine = parseCommandLine(rest, action === "print" ? printOptions : validateOptions)
  if (commandLine.problems.length > 0) {
    return yield* usageFailure("config", commandLine.problems.map(optionProblem), configUsage)
  }
  const showOrigin = commandLine.options.has("show-origin")
  return yield* loadServiceConfig(commandLine.positionals).pipe(
    Effect.flatMap(({ config, origins, file }) =>
      action === "validate"
        ? io.stdout(
            `configuration is valid: cluster ${config.clusterName}, exporters ${config.exporters.map((e) => e.id).join(", ")}\n`,
          )
        : io.stdout(printConfig(file, builtinComponents, showOrigin ? { origins } : {})),
    ),
    Effect.as(ExitCode.ok),
    Effect.catchTag("ConfigInvalid", (invalid) => reportInvalidConfig(invalid)),
  )
})

/** Every configuration problem on stderr, one per line with its key; exit code 2. */
export const reportInvalidConfig = (invalid: ConfigInvalid) =>
  Effect.gen(function* () {
    const io = yield* CliIo
    const count = invalid.problems.length
    yield* io.stderr(`invalid configuration (${count} problem${count === 1 ? "" : "s"}):\n`)
    yield* io.stderr(invalid.problems.map((problem) => `  ${problem.key}: ${problem.message}\n`).join(""))
    return ExitCode.usage
  })
