import type { ComponentSettings } from "../../config/ComponentSettings.ts"
import { formatGoDuration } from "../../config/GoDuration.ts"
import type { SettingRule } from "../../config/ResolveSettings.ts"
import type { Setting } from "../../config/Setting.ts"
import { HOUR, isUrlWithScheme } from "../../config/SettingRules.ts"
import { durationType, enumType, pairsType, stringType } from "../../config/SettingType.ts"
import { type TlsFiles, tlsSettings } from "../../config/TlsSettings.ts"
import {
  type QueueSettings,
  queueSettingList,
  queueSettingsOf,
  queueSettingsRule,
} from "../exporterhelper/QueueSettings.ts"

/**
 * The `http` exporter's settings (section `exporters.http`, or `exporters.http/<name>`): the Go
 * original's `HTTP_ENDPOINT`, `HTTP_TIMEOUT` and `HTTP_AUTH_TOKEN`, the body format, compression,
 * extra headers, TLS, and the queue every exporter has.
 */

export const httpEndpointSetting: Setting<string> = {
  key: "endpoint",
  env: "HTTP_ENDPOINT",
  flag: "--http-endpoint",
  type: stringType,
  default: "",
  secret: "userinfo",
  label: "HTTP endpoint",
  description: "URL the JSON array of records is POSTed to. Required for the http exporter.",
  // Emptiness is the rule's to report, so the section's defaults still build a config.
  check: (value) =>
    value.trim() === "" || isUrlWithScheme(value, ["http:", "https:"])
      ? undefined
      : "HTTP endpoint must be a valid HTTP/HTTPS URL",
}

export const httpTimeoutSetting: Setting<number> = {
  key: "timeout",
  env: "HTTP_TIMEOUT",
  flag: "--http-timeout",
  type: durationType,
  default: 30_000,
  secret: "none",
  label: "HTTP timeout",
  bounds: { min: 1, max: HOUR },
  description: "Deadline of one POST, answer included.",
  check: (value) => (value > 0 ? undefined : `timeout must be positive, got ${formatGoDuration(value)}`),
}

export const httpAuthTokenSetting: Setting<string> = {
  key: "authToken",
  env: "HTTP_AUTH_TOKEN",
  type: stringType,
  secret: "value",
  label: "HTTP auth token",
  description: "Token sent with every POST as a Bearer Authorization header.",
}

export const httpFormatSetting: Setting<"json" | "ndjson"> = {
  key: "format",
  env: "HTTP_FORMAT",
  flag: "--http-format",
  type: enumType(["json", "ndjson"]),
  default: "json",
  secret: "none",
  label: "HTTP format",
  description: "Body of a POST: a JSON array of records, or one record per line (application/x-ndjson).",
}

export const httpCompressionSetting: Setting<"gzip" | "none"> = {
  key: "compression",
  env: "HTTP_COMPRESSION",
  flag: "--http-compression",
  type: enumType(["gzip", "none"]),
  default: "none",
  secret: "none",
  label: "HTTP compression",
  description: "Compression of the body (Content-Encoding: gzip).",
}

export const httpHeadersSetting: Setting<Readonly<Record<string, string>>> = {
  key: "headers",
  env: "HTTP_HEADERS",
  type: pairsType,
  default: {},
  secret: "value",
  label: "HTTP headers",
  description: "Extra headers sent with every POST (k=v,k2=v2, values percent-encoded).",
}

const httpEndpointRule: SettingRule = (values) =>
  values.get(httpEndpointSetting)?.trim() === ""
    ? [{ setting: httpEndpointSetting, message: "HTTP endpoint URL is required" }]
    : []

/** The TLS client files: `HTTP_TLS_CA`, `HTTP_TLS_CERT`, `HTTP_TLS_KEY`. */
export const httpTls = tlsSettings({
  prefix: "HTTP",
  label: "HTTP",
  caDescription: "Path of the CA certificate that signs the endpoint's certificate (default: the system's CAs).",
  certDescription: "Path of the client certificate, for endpoints that require one.",
})

/** The `http` exporter's section. */
export interface HttpExporterConfig {
  /** Empty only in the defaults: a section without an endpoint is refused. */
  readonly endpoint: string
  readonly timeoutMs: number
  /** Secret. */
  readonly authToken?: string
  readonly format: "json" | "ndjson"
  readonly compression: "gzip" | "none"
  /** Secret values. */
  readonly headers: Readonly<Record<string, string>>
  readonly tls?: TlsFiles
  readonly queue: QueueSettings
}

/** The exporter's settings, in the order of the configuration reference. */
export const httpSettings: ComponentSettings<HttpExporterConfig> = {
  settings: [
    httpEndpointSetting,
    httpTimeoutSetting,
    httpAuthTokenSetting,
    httpFormatSetting,
    httpCompressionSetting,
    httpHeadersSetting,
    ...httpTls.list,
    ...queueSettingList,
  ],
  rules: [httpEndpointRule, httpTls.rule, queueSettingsRule],
  build: (values) => {
    const authToken = values.get(httpAuthTokenSetting)
    const tls = httpTls.filesOf(values)
    return {
      endpoint: values.require(httpEndpointSetting),
      timeoutMs: values.require(httpTimeoutSetting),
      ...(authToken === undefined ? {} : { authToken }),
      format: values.require(httpFormatSetting),
      compression: values.require(httpCompressionSetting),
      headers: values.require(httpHeadersSetting),
      ...(tls === undefined ? {} : { tls }),
      queue: queueSettingsOf(values),
    }
  },
}
