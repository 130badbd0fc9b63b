import { REDACTED, redactUrlList, redactUrlsIn } from "../log/UrlRedaction.ts"
import { type FileMapping, isFileMapping } from "./ResolveSettings.ts"
import type { AnySetting, Secrecy } from "./Setting.ts"
import { exporterSettings, serviceSettings } from "./Settings.ts"

/** A value with its secret parts replaced; key=value lists keep their keys and lose their values. */
export const redactValue = (secrecy: Secrecy, value: unknown): unknown => {
  if (secrecy === "none" || value === undefined || value === null || value === "") return value
  if (secrecy === "userinfo") return typeof value === "string" ? redactUrlList(value) : REDACTED
  if (isFileMapping(value)) return Object.fromEntries(Object.keys(value).map((key) => [key, REDACTED]))
  return REDACTED
}

// Sections the settings table does not describe (stdout, third-party exporters) are redacted by key name.
const SECRET_KEY = /pass|secret|token|cred|seed|private|api[-_]?key|auth|header|cookie|signature/i

const redactByName = (value: unknown, secret: boolean): unknown => {
  if (Array.isArray(value)) return value.map((item) => redactByName(item, secret))
  if (isFileMapping(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, redactByName(item, secret || SECRET_KEY.test(key))]),
    )
  }
  if (secret && value !== null && value !== undefined && value !== "") return REDACTED
  return typeof value === "string" ? redactUrlsIn(value) : value
}

const redactSettings = (mapping: FileMapping, settings: ReadonlyArray<AnySetting>): FileMapping => {
  const copy: Record<string, unknown> = structuredClone({ ...mapping })
  for (const setting of settings) {
    if (setting.secret === "none") continue
    const parts = setting.key.split(".")
    let node: Record<string, unknown> | undefined = copy
    for (const part of parts.slice(0, -1)) {
      const child: unknown = node?.[part]
      node = isFileMapping(child) ? (child as Record<string, unknown>) : undefined
    }
    const last = parts[parts.length - 1] ?? setting.key
    if (node !== undefined && Object.hasOwn(node, last)) node[last] = redactValue(setting.secret, node[last])
  }
  return copy
}

/**
 * The config file with every secret replaced by `<redacted>`: the secret settings of the table, and in
 * sections the table does not describe, values under names that look secret and the secrets of URLs.
 */
export const redactConfigFile = (file: FileMapping): FileMapping => {
  const redacted: Record<string, unknown> = { ...redactSettings(file, serviceSettings) }
  const exporters = file.exporters
  if (isFileMapping(exporters)) {
    redacted.exporters = Object.fromEntries(
      Object.entries(exporters).map(([id, section]) => {
        const type = id.split("/")[0] ?? id
        const settings = exporterSettings(type)
        const described = isFileMapping(section) && section.module === undefined && settings.length > 0
        return [id, described ? redactSettings(section, settings) : redactByName(section, false)]
      }),
    )
  }
  return redacted
}
