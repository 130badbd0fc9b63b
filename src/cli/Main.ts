import * as Effect from "effect/Effect"
import { recordSchema } from "../domain/GpuRecord.ts"
import { CliIo } from "./CliIo.ts"
import { ExitCode } from "./ExitCode.ts"
import { usageFailure } from "./UsageFailure.ts"
import { serviceVersion } from "./Version.ts"

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
  hub status        list the clusters of a hub: last heard, source lag, GPUs
  version           print the version

'gpu-serials COMMAND --help' describes a command. Exit codes: 0 ok, 1 runtime failure, 2 usage or
configuration error, 143 or 130 after a second SIGTERM or SIGINT during shutdown.
`

/**
 * Each command's module, imported only when that command runs, and its help, imported apart from it: a
 * command loads the client libraries it uses (Kubernetes, OpenTelemetry, NATS, PostgreSQL) and no other
 * command's, so `version`, `parse`, `config` and every `--help` start without any.
 */
const commands = {
  run: {
    usage: () => import("./commands/run/RunUsage.ts").then((module) => module.runUsage),
    command: () => import("./commands/run/RunCommand.ts").then((module) => module.runCommand),
  },
  demo: {
    usage: () => import("./commands/demo/DemoUsage.ts").then((module) => module.demoUsage),
    command: () => import("./commands/demo/DemoCommand.ts").then((module) => module.demoCommand),
  },
  parse: {
    usage: () => import("./commands/parse/ParseCommand.ts").then((module) => module.parseUsage),
    command: () => import("./commands/parse/ParseCommand.ts").then((module) => module.parseCommand),
  },
  config: {
    usage: () => import("./commands/config/ConfigCommand.ts").then((module) => module.configUsage),
    command: () => import("./commands/config/ConfigCommand.ts").then((module) => module.configCommand),
  },
  where: {
    usage: () => import("./commands/where/WhereUsage.ts").then((module) => module.whereUsage),
    command: () => import("./commands/where/WhereCommand.ts").then((module) => module.whereCommand),
  },
  tail: {
    usage: () => import("./commands/tail/TailUsage.ts").then((module) => module.tailUsage),
    command: () => import("./commands/tail/TailCommand.ts").then((module) => module.tailCommand),
  },
  hub: {
    usage: () => import("./commands/hub/HubUsage.ts").then((module) => module.hubUsage),
    command: () => import("./commands/hub/HubCommand.ts").then((module) => module.hubCommand),
  },
}

type CommandName = keyof typeof commands

const isCommand = (name: string | undefined): name is CommandName => name !== undefined && Object.hasOwn(commands, name)

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
    const usage = isCommand(topic) ? yield* Effect.promise(commands[topic].usage) : mainUsage
    yield* io.stdout(usage)
    return ExitCode.ok
  }
  if (command === "version" || command === "--version") {
    yield* io.stdout(`gpu-serials ${serviceVersion} (schema ${recordSchema}, node ${process.versions.node})\n`)
    return ExitCode.ok
  }
  if (!isCommand(command)) {
    return yield* usageFailure(command, [{ message: `unknown command ${command}` }], mainUsage)
  }
  if (wantsHelp(rest)) {
    yield* io.stdout(yield* Effect.promise(commands[command].usage))
    return ExitCode.ok
  }
  const run = yield* Effect.promise(commands[command].command)
  return yield* run(rest)
})
