import * as Result from "effect/Result"
import type { ConfigProblem } from "../component/Component.ts"
import { type AnySetting, type Setting, valueProblem } from "./Setting.ts"
import type { OriginSource, ValueOrigin } from "./ValueOrigin.ts"

/** Environment variables as the process received them. */
export type Env = Readonly<Record<string, string | undefined>>

/** A flag's value as the user wrote it; `flag` is the spelling used (`--no-labels`). */
export interface FlagValue {
  readonly flag: string
  readonly text: string
}

/** The flags of the command line as its parser made them: a value by setting, and what was wrong. */
export interface GivenFlags {
  readonly values: ReadonlyMap<AnySetting, FlagValue>
  readonly problems: ReadonlyArray<ConfigProblem>
}

/** A mapping read from the config file. */
export type FileMapping = Readonly<Record<string, unknown>>

/** Where the settings of one scope are looked up, by precedence. */
export interface SettingSources {
  readonly flags: ReadonlyMap<AnySetting, FlagValue>
  readonly env: Env
  /**
   * The mapping setting keys are relative to (the whole file, or one exporter's section) and its dotted
   * path (empty for the whole file); absent when the config file has no such section.
   */
  readonly file: { readonly mapping: FileMapping | undefined; readonly path: string }
  /**
   * Name a defaulted value by its file path even when its section is not in the file (a section checked
   * on its own, where only file keys exist); otherwise by its environment variable, where a user sets it.
   */
  readonly fileKeysOnly?: boolean
}

export const isFileMapping = (value: unknown): value is FileMapping =>
  value !== null && typeof value === "object" && !Array.isArray(value)

/** The value at a dotted key; `null` (an empty YAML value) counts as not set. */
export const valueAt = (mapping: FileMapping | undefined, key: string): unknown => {
  let node: unknown = mapping
  for (const part of key.split(".")) {
    if (!isFileMapping(node)) return undefined
    node = Object.hasOwn(node, part) ? node[part] : undefined
  }
  return node === null ? undefined : node
}

const joinPath = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`)

/** The resolved values of a scope with their origins. */
export class SettingValues {
  private readonly entries: ReadonlyMap<AnySetting, { readonly value: unknown; readonly origin: ValueOrigin }>

  constructor(entries: ReadonlyMap<AnySetting, { readonly value: unknown; readonly origin: ValueOrigin }>) {
    this.entries = entries
  }

  /** The value, or undefined when the setting is unset without default or could not be read. */
  get<T>(setting: Setting<T>): T | undefined {
    // Each entry holds the value that setting's own type produced.
    return this.entries.get(setting)?.value as T | undefined
  }

  /**
   * The value of a setting that has a default, once resolution found no problems: then every such
   * setting has a value, and a missing one is a defect.
   */
  require<T>(setting: Setting<T>): T {
    const value = this.get(setting)
    if (value === undefined) throw new Error(`setting ${setting.key} has no value`)
    return value
  }

  origin(setting: AnySetting): ValueOrigin {
    return this.entries.get(setting)?.origin ?? { source: "default", key: setting.env ?? setting.key }
  }

  /** Whether the setting has a value that passed its rule. */
  has(setting: AnySetting): boolean {
    return this.entries.get(setting)?.value !== undefined
  }
}

/** Problems a rule across several settings finds, each pinned to one setting. */
export type SettingRule = (values: SettingValues) => ReadonlyArray<{
  readonly setting: AnySetting
  readonly message: string
}>

interface Candidate {
  readonly source: OriginSource
  readonly key: string
  readonly read: () => Result.Result<unknown, string>
}

const candidateFor = (setting: AnySetting, sources: SettingSources): Candidate => {
  const reveal = setting.secret === "none"
  const path = joinPath(sources.file.path, setting.key)
  const flag = sources.flags.get(setting)
  if (flag !== undefined) {
    return { source: "flag", key: flag.flag, read: () => setting.type.fromText(flag.text, reveal) }
  }
  const envText = setting.env === undefined ? undefined : sources.env[setting.env]
  if (setting.env !== undefined && envText !== undefined && (envText !== "" || setting.emptyEnvIsValue === true)) {
    return { source: "env", key: setting.env, read: () => setting.type.fromText(envText, reveal) }
  }
  const fileValue = valueAt(sources.file.mapping, setting.key)
  if (fileValue !== undefined) {
    return { source: "file", key: path, read: () => setting.type.fromFile(fileValue, reveal) }
  }
  const parentKey = setting.key.includes(".") ? setting.key.slice(0, setting.key.lastIndexOf(".")) : ""
  const sectionInFile =
    sources.file.mapping !== undefined && (parentKey === "" || isFileMapping(valueAt(sources.file.mapping, parentKey)))
  return {
    source: "default",
    key: sectionInFile || sources.fileKeysOnly === true ? path : (setting.env ?? setting.flag ?? path),
    read: () => Result.succeed(setting.default),
  }
}

/**
 * Resolves each setting from its flag, environment variable, file value or default, in that order, and
 * checks it against its rule and then the rules across settings. Every problem names the key the value
 * came from.
 */
export const resolveSettings = (
  settings: ReadonlyArray<AnySetting>,
  rules: ReadonlyArray<SettingRule>,
  sources: SettingSources,
): { readonly values: SettingValues; readonly problems: ReadonlyArray<ConfigProblem> } => {
  const entries = new Map<AnySetting, { readonly value: unknown; readonly origin: ValueOrigin }>()
  const problems: Array<ConfigProblem> = []
  for (const setting of settings) {
    const candidate = candidateFor(setting, sources)
    const origin: ValueOrigin = { source: candidate.source, key: candidate.key }
    const derived =
      candidate.source === "default" && setting.defaultFrom !== undefined
        ? setting.defaultFrom(new SettingValues(entries))
        : undefined
    const read = derived === undefined ? candidate.read() : Result.succeed(derived)
    if (Result.isFailure(read)) {
      problems.push({ key: origin.key, message: setting.unreadable ?? `${setting.label} ${read.failure}` })
      entries.set(setting, { value: undefined, origin })
      continue
    }
    const problem = read.success === undefined ? undefined : valueProblem(setting, read.success)
    if (problem !== undefined) problems.push({ key: origin.key, message: problem })
    entries.set(setting, { value: problem === undefined ? read.success : undefined, origin })
  }
  const values = new SettingValues(entries)
  for (const rule of rules) {
    for (const found of rule(values)) problems.push({ key: values.origin(found.setting).key, message: found.message })
  }
  return { values, problems }
}
