import * as Result from "effect/Result"
import type { ConfigProblem } from "../component/Component.ts"
import type { ObservationKind } from "../pipeline/ObservationKind.ts"
import {
  type FileMapping,
  isFileMapping,
  resolveSettings,
  type SettingRule,
  type SettingValues,
} from "./ResolveSettings.ts"
import { checkKeys } from "./SectionKeys.ts"
import type { AnySetting } from "./Setting.ts"
import type { FileValue } from "./SettingType.ts"

/**
 * What a component declares about its configuration, next to its factory: its settings (keys relative
 * to its section, with their environment variables, flags, types, defaults, bounds, secrecy and
 * descriptions), the rules across them, and the typed config it builds from their values. The config
 * engine resolves them (flags > environment > file > defaults), prints, redacts and documents them,
 * without knowing the component.
 */
export interface ComponentSettings<Config> {
  readonly settings: ReadonlyArray<AnySetting>
  readonly rules?: ReadonlyArray<SettingRule>
  /** The component's config from values that passed every rule (each setting with a default has one). */
  readonly build: (values: SettingValues) => Config
}

/** A component type as the configuration sees it: its name in the config file and its settings. */
export interface ConfigurableComponent {
  readonly type: string
  readonly settings: ComponentSettings<unknown>
  /**
   * A receiver's or processor's observations (`node` when absent). A pipeline that lists no receivers or
   * processors gets those of the cluster's (`node`); a hub's are named in `service.pipelines`.
   */
  readonly observes?: ObservationKind
}

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

/** The settings' values in config-file form, keyed by their dotted keys (for printing). */
export const sectionOf = (settings: ReadonlyArray<AnySetting>, values: SettingValues): FileMapping => {
  const section: Record<string, unknown> = {}
  for (const setting of settings) {
    const value = values.get(setting)
    if (value !== undefined) setAt(section, setting.key, setting.type.format(value))
  }
  return section
}

/**
 * Checks a section on its own (the file's values over the defaults, no environment or flags), as a
 * factory's `validate`: every problem at once, keys relative to the section; an absent section
 * (`undefined` or `null`, as YAML gives for `stdout:`) means "all defaults".
 */
export const decodeSection = <Config>(
  spec: ComponentSettings<Config>,
  section: unknown,
): Result.Result<Config, ReadonlyArray<ConfigProblem>> => {
  if (section !== undefined && section !== null && !isFileMapping(section)) {
    return Result.fail([{ key: "", message: "must be a mapping" }])
  }
  const mapping = section ?? {}
  const problems: Array<ConfigProblem> = []
  checkKeys(
    mapping,
    "",
    spec.settings.map((setting) => setting.key),
    problems,
  )
  const resolved = resolveSettings(spec.settings, spec.rules ?? [], {
    flags: new Map(),
    env: {},
    file: { mapping, path: "" },
    fileKeysOnly: true,
  })
  problems.push(...resolved.problems)
  return problems.length > 0 ? Result.fail(problems) : Result.succeed(spec.build(resolved.values))
}

/**
 * The config every setting's default builds, as the Collector's `createDefaultConfig`: a starting point
 * that need not pass the rules across settings (a required endpoint has no default, and `validate` asks
 * for one), while a default that breaks its own setting's rule or range is a defect of the component.
 */
const defaultsOf = <Config>(spec: ComponentSettings<Config>): Config => {
  const resolved = resolveSettings(spec.settings, [], {
    flags: new Map(),
    env: {},
    file: { mapping: {}, path: "" },
    fileKeysOnly: true,
  })
  if (resolved.problems.length > 0) {
    const messages = resolved.problems.map((problem) => problem.message).join("; ")
    throw new Error(`the defaults of a component break their own settings: ${messages}`)
  }
  return spec.build(resolved.values)
}

/**
 * The `settings`, `defaultConfig` and `validate` of a factory whose config is described by `spec`: the
 * factory owns its settings, and its section is checked by the same rules wherever it comes from.
 */
export const configuredBy = <Config>(spec: ComponentSettings<Config>) => ({
  settings: spec,
  defaultConfig: defaultsOf(spec),
  validate: (section: unknown) => decodeSection(spec, section),
})

/** A factory that owns its settings, as the distribution lists its built-in components. */
export interface Configured<Config> {
  readonly settings: ComponentSettings<Config>
}
