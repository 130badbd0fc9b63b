import { REDACTED, redactUrlList, redactUrlsIn } from "../log/UrlRedaction.ts"
import type { ComponentCatalog } from "./ComponentCatalog.ts"
import { type FileMapping, isFileMapping } from "./ResolveSettings.ts"
import { serviceSettings } from "./ServiceSettings.ts"
import type { AnySetting, Secrecy } from "./Setting.ts"

/** A value with its secret parts replaced; key=value lists keep their keys and lose their values. */
export const redactValue = (secrecy: Secrecy, value: unknown): unknown => {
  if (secrecy === "none" || value === undefined || value === null || value === "") return value
  if (secrecy === "userinfo") return typeof value === "string" ? redactUrlList(value) : REDACTED
  if (isFileMapping(value)) return Object.fromEntries(Object.keys(value).map((key) => [key, REDACTED]))
  return REDACTED
}

// Sections no settings describe (third-party exporters) are redacted by key name.
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

const redactComponents = (
  sections: unknown,
  known: ReadonlyArray<{ readonly type: string; readonly settings: { readonly settings: ReadonlyArray<AnySetting> } }>,
): unknown => {
  if (!isFileMapping(sections)) return sections
  return Object.fromEntries(
    Object.entries(sections).map(([id, section]) => {
      const type = id.split("/")[0] ?? id
      const settings = known.find((component) => component.type === type)?.settings.settings
      const described = isFileMapping(section) && section.module === undefined && settings !== undefined
      return [id, described ? redactSettings(section, settings) : redactByName(section, false)]
    }),
  )
}

/**
 * The config file with every secret replaced by `<redacted>`: the secret settings of the service and of
 * the components of `catalog`, and in sections no settings describe, values under names that look
 * secret and the secrets of URLs.
 */
export const redactConfigFile = (file: FileMapping, catalog: ComponentCatalog): FileMapping => {
  const redacted: Record<string, unknown> = { ...redactSettings(file, serviceSettings) }
  for (const kind of ["receivers", "processors", "exporters"] as const) {
    if (Object.hasOwn(file, kind)) redacted[kind] = redactComponents(file[kind], catalog[kind])
  }
  return redacted
}
