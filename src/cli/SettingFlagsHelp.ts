import { settingReference } from "../config/SettingsReference.ts"
import {
  boolType,
  byteSizeType,
  durationType,
  floatType,
  intType,
  listType,
  millisType,
  stringType,
} from "../config/SettingType.ts"
import type { FlagSpec } from "./ServiceFlags.ts"

/** Help text fits a terminal of this many columns. */
export const HELP_WIDTH = 100

const INDENT = "  "
/** Where descriptions start; a longer flag puts its description on the next line. */
const DESCRIPTION_COLUMN = 36
/** An enum's choices name its value in help when they are this short (`auto|xml|csv`). */
const LONGEST_CHOICES = 24

// Keyed by the type objects themselves, whatever their value types.
const valueNames: ReadonlyMap<object, string> = new Map<object, string>([
  [intType, "N"],
  [floatType, "NUMBER"],
  [durationType, "DURATION"],
  [millisType, "DURATION"],
  [byteSizeType, "SIZE"],
  [stringType, "TEXT"],
  [listType, "LIST"],
])

/** Words of `text` in lines of at most `width` characters (a longer word keeps its own line). */
const wrap = (text: string, width: number): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(" ").filter((part) => part !== "")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line === "" ? word : `${line} ${word}`
    }
  }
  if (line !== "") lines.push(line)
  return lines
}

/** The flag as help writes it: `--workers N`, `--[no-]labels`, `--log-level debug|info|warn|error`. */
const usageOf = (spec: FlagSpec): string => {
  const type = spec.setting?.type
  if (type === undefined) return `${spec.flag} FILE`
  if (type === boolType) return `--[no-]${spec.flag.slice(2)}`
  const valueName = valueNames.get(type) ?? (type.name.length <= LONGEST_CHOICES ? type.name : "VALUE")
  return `${spec.flag} ${valueName}`
}

/** Where the value also comes from, its default and range: `env WORKERS, default 16, range 1..1024`. */
const detailsOf = (spec: FlagSpec): string => {
  const setting = spec.setting
  if (setting === undefined) return ""
  const reference = settingReference(setting)
  const usage = usageOf(spec)
  return [
    ...(reference.env === undefined ? [] : [`env ${reference.env}`]),
    ...(reference.default === undefined || reference.default === "" ? [] : [`default ${reference.default}`]),
    ...(reference.range === undefined ? [] : [`range ${reference.range}`]),
    ...(usage.endsWith(" VALUE") ? [`one of ${reference.type}`] : []),
  ].join(", ")
}

const entry = (spec: FlagSpec): ReadonlyArray<string> => {
  const usage = `${INDENT}${usageOf(spec)}`
  const width = HELP_WIDTH - DESCRIPTION_COLUMN
  const text = [...wrap(spec.description, width), ...wrap(detailsOf(spec), width)]
  const pad = " ".repeat(DESCRIPTION_COLUMN)
  if (usage.length + 2 > DESCRIPTION_COLUMN) return [usage, ...text.map((line) => `${pad}${line}`)]
  const [first = "", ...rest] = text
  return [`${usage.padEnd(DESCRIPTION_COLUMN)}${first}`, ...rest.map((line) => `${pad}${line}`)]
}

/**
 * The help of the setting flags, from the settings of the service and its components (the source of the
 * configuration reference): each flag with its value, description, environment variable, default and
 * range. A switch is shown once as `--[no-]name`.
 */
export const settingFlagsHelp = (specs: ReadonlyArray<FlagSpec>): string =>
  specs
    .filter((spec) => spec.impliedValue === undefined)
    .flatMap(entry)
    .join("\n")
