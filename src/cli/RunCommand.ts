import { Effect } from "effect"
import { builtinComponents } from "../component/BuiltinComponents.ts"
import { serviceFlags } from "../config/Flags.ts"
import { settingApplies } from "../config/SettingsReference.ts"
import { CliIo } from "./CliIo.ts"
import { reportInvalidConfig } from "./ConfigCommand.ts"
import { ExitCode } from "./ExitCode.ts"
import { loadServiceConfig } from "./ServiceConfigLoader.ts"

const builtinExporterTypes = (builtinComponents.exporters ?? []).map((factory) => factory.type)

/** The flags of the service settings and of the exporters this build has. */
const runFlags = serviceFlags.filter(
  (spec) => spec.setting === undefined || settingApplies(builtinExporterTypes)(spec.setting),
)

const flagColumn = Math.max(...runFlags.map((spec) => spec.flag.length + (spec.takesValue ? 6 : 0))) + 2

export const runUsage = `Usage: gpu-serials run [--config FILE] [SETTING FLAGS]

Runs the service: watches the device-plugin pods, reads nvidia-smi in them and exports GPU records.
Settings come from flags, then environment variables, then the config file, then defaults.

Setting flags:
${runFlags
  .map((spec) => `  ${`${spec.flag}${spec.takesValue ? " VALUE" : ""}`.padEnd(flagColumn)}${spec.description}`)
  .join("\n")}
`

/**
 * `gpu-serials run` and `gpu-serials demo`. The configuration is resolved and checked in full; the
 * Kubernetes receiver that would read the cluster is not in this version, and the command says so
 * instead of pretending to run.
 */
export const runCommand = Effect.fn("RunCommand")(function* (command: "run" | "demo", argv: ReadonlyArray<string>) {
  const io = yield* CliIo
  return yield* loadServiceConfig(command === "demo" ? withDemoDefaults(argv) : argv).pipe(
    Effect.flatMap(() =>
      io.stderr(
        `gpu-serials ${command}: the configuration is valid, but this version has no kube_exec receiver: ` +
          "it cannot read a cluster yet. Use 'gpu-serials parse' on an nvidia-smi capture.\n",
      ),
    ),
    Effect.as(ExitCode.failure),
    Effect.catchTag("ConfigInvalid", reportInvalidConfig),
  )
})

/** The demo names its own cluster unless told otherwise. */
const withDemoDefaults = (argv: ReadonlyArray<string>): ReadonlyArray<string> =>
  argv.some((argument) => argument.startsWith("--cluster-name")) ? argv : ["--cluster-name", "demo", ...argv]
