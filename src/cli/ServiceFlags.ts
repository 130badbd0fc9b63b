import type { ConfigProblem } from "../component/Component.ts"
import { didYouMean } from "../config/ClosestName.ts"
import { type ComponentCatalog, settingsSections } from "../config/ComponentCatalog.ts"
import type { Env, FlagValue, GivenFlags } from "../config/ResolveSettings.ts"
import type { AnySetting } from "../config/Setting.ts"
import { boolType, listType } from "../config/SettingType.ts"
import { builtinComponents } from "../service/BuiltinComponents.ts"
import { type CommandLineProblem, type CommandLineSpec, type OptionKind, parseCommandLine } from "./CommandLine.ts"

/** The flag naming the config file. */
export const CONFIG_FLAG = "--config"
/** The environment variable naming the config file when `--config` is not given. */
export const CONFIG_ENV = "GPU_SERIALS_CONFIG"

/** A flag the service settings consume, for `--help` and for the command line parser. */
export interface FlagSpec {
  readonly flag: string
  /** False for switches (`--labels`, `--no-labels`); they take `--labels=false` but never the next argument. */
  readonly takesValue: boolean
  /** Absent for `--config`. */
  readonly setting?: AnySetting
  /** Set on `--no-<name>`: the value the switch stands for. */
  readonly impliedValue?: string
  readonly description: string
}

const settingFlags = (setting: AnySetting): ReadonlyArray<FlagSpec> => {
  if (setting.flag === undefined) return []
  const takesValue = setting.type !== boolType
  const main: FlagSpec = { flag: setting.flag, takesValue, setting, description: setting.description }
  if (takesValue) return [main]
  const negated: FlagSpec = {
    flag: `--no-${setting.flag.slice(2)}`,
    takesValue: false,
    setting,
    impliedValue: "false",
    description: `Turns ${setting.flag} off.`,
  }
  return [main, negated]
}

/**
 * Every flag of the service's settings and of the components of `catalog`, `--config` first. A
 * component's flag sets that setting in every component of its type in the pipeline.
 */
export const serviceFlags = (catalog: ComponentCatalog): ReadonlyArray<FlagSpec> => {
  const specs = new Map<string, FlagSpec>()
  for (const section of settingsSections(catalog)) {
    for (const setting of section.settings) {
      for (const spec of settingFlags(setting)) if (!specs.has(spec.flag)) specs.set(spec.flag, spec)
    }
  }
  return [
    { flag: CONFIG_FLAG, takesValue: true, description: `Path of the YAML config file (else $${CONFIG_ENV}).` },
    ...specs.values(),
  ]
}

/** The parser's options: a switch is negatable, so its `--no-` flag is the switch's own form. */
const flagOptions = (flags: ReadonlyArray<FlagSpec>): CommandLineSpec => ({
  options: Object.fromEntries(
    flags.flatMap(
      (spec): ReadonlyArray<readonly [string, OptionKind]> =>
        spec.impliedValue === undefined ? [[spec.flag.slice(2), spec.takesValue ? "value" : "negatable"]] : [],
    ),
  ),
  others: "unexpected",
})

const unexpectedArgument = (argument: string): ConfigProblem => ({
  key: argument,
  message: "unexpected argument (settings are given as --flag value)",
})

const flagProblem = (problem: CommandLineProblem): ConfigProblem => {
  switch (problem.kind) {
    case "unknown":
      // Settings have no single-dash flags: `-w` is a stray argument.
      return problem.option.startsWith("--")
        ? { key: problem.option, message: `unknown flag${didYouMean(problem.option, problem.known)}` }
        : unexpectedArgument(problem.option)
    case "needs-value":
      return { key: problem.option, message: "flag needs a value" }
    case "takes-no-value":
      return { key: problem.option, message: "flag takes no value" }
    case "unexpected-argument":
      return unexpectedArgument(problem.argument)
  }
}

/** The flags as the configuration takes them, and the config file `--config` names. */
export interface ParsedFlags extends GivenFlags {
  readonly configPath?: string
}

/**
 * Parses the arguments after the subcommand: `--workers 4`, `--workers=4`, `--labels`, `--no-labels`,
 * `--labels=false`; a list flag given twice (`--exporter stdout --exporter kafka`) collects both. Unknown
 * flags and stray arguments are problems named by what the user typed.
 */
export const parseFlags = (argv: ReadonlyArray<string>, flags: ReadonlyArray<FlagSpec>): ParsedFlags => {
  const flagsByName: ReadonlyMap<string, FlagSpec> = new Map(flags.map((spec) => [spec.flag, spec]))
  const line = parseCommandLine(argv, flagOptions(flags))
  const values = new Map<AnySetting, FlagValue>()
  const problems: Array<ConfigProblem> = line.problems.map(flagProblem)
  let configPath: string | undefined
  for (const { name, option, value } of line.given) {
    const setting = flagsByName.get(`--${name}`)?.setting
    if (setting === undefined) {
      if (value === "") problems.push({ key: option, message: "flag needs a value" })
      else configPath = value
      continue
    }
    const earlier = values.get(setting)
    const collected = earlier !== undefined && setting.type === listType ? `${earlier.text},${value}` : value
    values.set(setting, { flag: option, text: collected })
  }
  return configPath === undefined ? { values, problems } : { values, configPath, problems }
}

/** The config file to read: `--config`, else `$GPU_SERIALS_CONFIG`, else none. */
export const configFilePath = (
  argv: ReadonlyArray<string>,
  env: Env,
  flags: ReadonlyArray<FlagSpec>,
): string | undefined => {
  const fromFlag = parseFlags(argv, flags).configPath
  if (fromFlag !== undefined && fromFlag !== "") return fromFlag
  const fromEnv = env[CONFIG_ENV]
  return fromEnv === undefined || fromEnv === "" ? undefined : fromEnv
}

/** The flags of this distribution's settings, parsed from the arguments after the subcommand (`--workers 4`). */
export const parseServiceFlags = (argv: ReadonlyArray<string>): ParsedFlags =>
  parseFlags(argv, serviceFlags(builtinComponents))
