import { Result } from "effect"
import type { ConfigProblem } from "../component/Component.ts"
import { checkKeys } from "./ConfigFile.ts"
import {
  type Env,
  type FileMapping,
  type FlagValue,
  isFileMapping,
  resolveSettings,
  type SettingValues,
} from "./ResolveSettings.ts"
import type { AnySetting } from "./Setting.ts"
import { exporterRules, exporterSettings } from "./Settings.ts"
import type { FileValue } from "./SettingType.ts"
import type { ValueOrigin } from "./ValueOrigin.ts"

/**
 * The section of a built-in exporter whose settings are in the settings table (http, postgres, nats,
 * otlp): its file values under its environment variables and flags, checked, with defaults filled in.
 */
export interface ExporterSection {
  /** The section in config-file form: every value set, in the form the file writes it. */
  readonly section: FileMapping
  readonly values: SettingValues
  /** Origins by dotted path below the section's path. */
  readonly origins: Readonly<Record<string, ValueOrigin>>
  readonly problems: ReadonlyArray<ConfigProblem>
}

/** Whether the settings table knows this exporter type's settings. */
export const hasExporterSettings = (type: string): boolean => exporterSettings(type).length > 0

const setAt = (mapping: Record<string, unknown>, key: string, value: FileValue): void => {
  const parts = key.split(".")
  let node = mapping
  for (const part of parts.slice(0, -1)) {
    const child = node[part]
    const next: Record<string, unknown> = isFileMapping(child) ? { ...child } : {}
    node[part] = next
    node = next
  }
  node[parts[parts.length - 1] ?? key] = value
}

/** The settings' values in config-file form, keyed by their dotted keys. */
export const formatSettings = (settings: ReadonlyArray<AnySetting>, values: SettingValues): FileMapping => {
  const section: Record<string, unknown> = {}
  for (const setting of settings) {
    const value = values.get(setting)
    if (value !== undefined) setAt(section, setting.key, setting.type.format(value))
  }
  return section
}

/**
 * Resolves the section of a built-in exporter at `path` (`exporters.nats/archive`): flags and
 * environment variables (given only when the exporter is in the pipeline) over the file's section over
 * defaults. Unknown keys in the section are reported where the file is read.
 */
export const resolveExporterSection = (
  type: string,
  path: string,
  section: FileMapping | undefined,
  overrides: { readonly flags: ReadonlyMap<AnySetting, FlagValue>; readonly env: Env },
): ExporterSection => {
  const settings = exporterSettings(type)
  const resolved = resolveSettings(settings, exporterRules(type), {
    flags: overrides.flags,
    env: overrides.env,
    file: { mapping: section, path },
  })
  const origins: Record<string, ValueOrigin> = {}
  for (const setting of settings) origins[`${path}.${setting.key}`] = resolved.values.origin(setting)
  return {
    section: formatSettings(settings, resolved.values),
    values: resolved.values,
    origins,
    problems: resolved.problems,
  }
}

/**
 * Validates a built-in exporter's section on its own, for that exporter's factory: problems carry keys
 * relative to the section (`url`, `tls.ca`), as component factories report them.
 */
export const decodeExporterSection = (
  type: string,
  section: unknown,
): Result.Result<SettingValues, ReadonlyArray<ConfigProblem>> => {
  if (section !== undefined && section !== null && !isFileMapping(section)) {
    return Result.fail([{ key: "", message: "must be a mapping" }])
  }
  const mapping = section ?? {}
  const problems: Array<ConfigProblem> = []
  checkKeys(
    mapping,
    "",
    exporterSettings(type).map((setting) => setting.key),
    problems,
  )
  const resolved = resolveSettings(exporterSettings(type), exporterRules(type), {
    flags: new Map(),
    env: {},
    file: { mapping, path: "" },
  })
  problems.push(...resolved.problems)
  return problems.length > 0 ? Result.fail(problems) : Result.succeed(resolved.values)
}
