import { type ComponentCatalog, pathIn, type SettingsSection, settingsSections } from "./ComponentCatalog.ts"
import type { AnySetting } from "./Setting.ts"
import { boundsText } from "./SettingBounds.ts"

/** One row of the configuration reference (docs/configuration.md, `--help`). */
export interface SettingReference {
  /** Dotted config-file path, with a component's type as its id (`exporters.stdout.queueSize`). */
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

/** One setting of `section` (the root unless given) as the configuration reference lists it. */
export const settingReference = (
  setting: AnySetting,
  section: SettingsSection = { path: "", settings: [setting] },
): SettingReference => {
  const text = defaultText(setting)
  return {
    path: pathIn(section, setting),
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

/** Every setting of the service and of the components of `catalog`, in the reference's order. */
export const settingsReference = (catalog: ComponentCatalog): ReadonlyArray<SettingReference> =>
  settingsSections(catalog).flatMap((section) => section.settings.map((setting) => settingReference(setting, section)))

const cell = (text: string | undefined): string =>
  text === undefined || text === "" ? "" : `\`${text.replaceAll("|", "\\|")}\``

/** The configuration reference as a Markdown table. */
export const settingsReferenceMarkdown = (catalog: ComponentCatalog): string => {
  const rows = settingsReference(catalog).map((row) =>
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
