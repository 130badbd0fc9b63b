import { Effect } from "effect"
import { recordSchema } from "../domain/GpuRecord.ts"
import { CliIo } from "./CliIo.ts"
import { configCommand, configUsage } from "./ConfigCommand.ts"
import { demoCommand, demoUsage } from "./DemoCommand.ts"
import { ExitCode } from "./ExitCode.ts"
import { parseCommand, parseUsage } from "./ParseCommand.ts"
import { runCommand, runUsage } from "./RunCommand.ts"
import { tailCommand, tailUsage } from "./TailCommand.ts"
import { usageFailure } from "./UsageFailure.ts"
import { serviceVersion } from "./Version.ts"
import { whereCommand, whereUsage } from "./WhereCommand.ts"

export const mainUsage = `gpu-serials ${serviceVersion}: where every physical GPU of a Kubernetes cluster is.

Usage: gpu-serials COMMAND [ARGS]

Commands:
  run               run the service against the cluster
  demo              run the service against the built-in simulated cluster
  parse [FILE|-]    turn an nvidia-smi capture (-q -x XML or --query-gpu CSV) into GPU records
  config validate   check the configuration (file, environment, flags) and report every problem
  config print      print the effective configuration, secrets redacted
  where SERIAL|UUID print where a GPU is now, from the NATS KV bucket of current locations
  tail              print the inventory events published on NATS as they arrive
  version           print the version

'gpu-serials COMMAND --help' describes a command. Exit codes: 0 ok, 1 runtime failure, 2 usage or
configuration error, 143 or 130 after a second SIGTERM or SIGINT during shutdown.
`

const usages: Readonly<Record<string, string>> = {
  run: runUsage,
  demo: demoUsage,
  parse: parseUsage,
  config: configUsage,
  where: whereUsage,
  tail: tailUsage,
}

const wantsHelp = (argv: ReadonlyArray<string>): boolean => argv.includes("--help") || argv.includes("-h")

/** Runs one command line and answers its exit code; every failure is reported before returning. */
export const main = Effect.fn("main")(function* (argv: ReadonlyArray<string>) {
  const io = yield* CliIo
  const [command, ...rest] = argv
  if (command === undefined) {
    yield* io.stderr(mainUsage)
    return ExitCode.usage
  }
  if (command === "--help" || command === "-h" || command === "help") {
    const topic = command === "help" ? rest[0] : undefined
    yield* io.stdout((topic === undefined ? undefined : usages[topic]) ?? mainUsage)
    return ExitCode.ok
  }
  if (command === "version" || command === "--version") {
    yield* io.stdout(`gpu-serials ${serviceVersion} (schema ${recordSchema}, node ${process.versions.node})\n`)
    return ExitCode.ok
  }
  const usage = usages[command]
  if (usage !== undefined && wantsHelp(rest)) {
    yield* io.stdout(usage)
    return ExitCode.ok
  }
  switch (command) {
    case "parse":
      return yield* parseCommand(rest)
    case "config":
      return yield* configCommand(rest)
    case "run":
      return yield* runCommand(rest)
    case "demo":
      return yield* demoCommand(rest)
    case "where":
      return yield* whereCommand(rest)
    case "tail":
      return yield* tailCommand(rest)
    default:
      return yield* usageFailure(command, [{ message: `unknown command ${command}` }], mainUsage)
  }
})
