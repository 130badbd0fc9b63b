import { type AnySetting, settingPath } from "./Setting.ts"
import { boundsText } from "./SettingBounds.ts"
import { allSettings } from "./Settings.ts"

/** One row of the configuration reference (README table, `--help`). */
export interface SettingReference {
  /** Dotted config-file path, with an exporter's default component id (`exporters.nats.url`). */
  readonly path: string
  readonly env?: string
  readonly flag?: string
  readonly type: string
  /** The default as the config file writes it; absent when the setting is unset by default. */
  readonly default?: string
  /** The accepted range of a numeric setting (`1..1024`, `0 or 1s..24h`), in the type's own units. */
  readonly range?: string
  readonly secret: boolean
  readonly description: string
}

const defaultText = (setting: AnySetting): string | undefined => {
  if (setting.default === undefined) return undefined
  const formatted = setting.type.format(setting.default)
  if (typeof formatted === "string") return formatted
  if (typeof formatted === "number" || typeof formatted === "boolean") return String(formatted)
  if (Array.isArray(formatted)) return formatted.join(",")
  return Object.entries(formatted)
    .map(([key, value]) => `${key}=${value}`)
    .join(",")
}

/** Whether a setting applies to a service whose exporters are `exporterTypes` (all of them when absent). */
export const settingApplies =
  (exporterTypes: ReadonlyArray<string> | undefined) =>
  (setting: AnySetting): boolean =>
    exporterTypes === undefined || setting.exporter === undefined || exporterTypes.includes(setting.exporter)

/** One setting as the configuration reference lists it. */
export const settingReference = (setting: AnySetting): SettingReference => {
  const text = defaultText(setting)
  return {
    path: settingPath(setting),
    ...(setting.env === undefined ? {} : { env: setting.env }),
    ...(setting.flag === undefined ? {} : { flag: setting.flag }),
    type: setting.type.name,
    ...(text === undefined ? {} : { default: text }),
    ...(setting.bounds === undefined
      ? {}
      : { range: boundsText(setting.bounds, (bound) => String(setting.type.format(bound))) }),
    secret: setting.secret !== "none",
    description: setting.description,
  }
}

/**
 * Every setting as the configuration reference lists it, in the table's order; given the exporter types a
 * build has, only the settings of those exporters.
 */
export const settingsReference = (exporterTypes?: ReadonlyArray<string>): ReadonlyArray<SettingReference> =>
  allSettings.filter(settingApplies(exporterTypes)).map(settingReference)

const cell = (text: string | undefined): string =>
  text === undefined || text === "" ? "" : `\`${text.replaceAll("|", "\\|")}\``

/** The configuration reference as a Markdown table. */
export const settingsReferenceMarkdown = (exporterTypes?: ReadonlyArray<string>): string => {
  const rows = settingsReference(exporterTypes).map((row) =>
    [
      cell(row.env),
      cell(row.flag),
      cell(row.path),
      cell(row.type),
      row.default === undefined ? "" : row.default === "" ? '`""`' : cell(row.default),
      cell(row.range),
      `${row.description.replaceAll("|", "\\|")}${row.secret ? " Secret." : ""}`,
    ].join(" | "),
  )
  return [
    "| variable | flag | config file | type | default | range | description |",
    "|---|---|---|---|---|---|---|",
    ...rows.map((row) => `| ${row} |`),
  ].join("\n")
}
