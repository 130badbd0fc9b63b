import type { ComponentSettings } from "../../config/ComponentSettings.ts"
import type { SettingRule } from "../../config/ResolveSettings.ts"
import type { Setting } from "../../config/Setting.ts"
import { isUrlWithScheme } from "../../config/SettingRules.ts"
import { boolType, enumType, intType, stringType } from "../../config/SettingType.ts"
import {
  type QueueSettings,
  queueSettingList,
  queueSettingsOf,
  queueSettingsRule,
} from "../exporterhelper/QueueSettings.ts"

/**
 * The `postgres` exporter's settings (section `exporters.postgres`): the Go original's connection
 * variables, its table and migration switch, the schema, and the queue every exporter has.
 */

export const sslModes = ["disable", "require", "verify-ca", "verify-full"] as const
export type SslMode = (typeof sslModes)[number]

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
/** Leaves room for the `_migrations` suffix and index names within PostgreSQL's 63-byte identifiers. */
const MAX_TABLE_LENGTH = 40

export const postgresUrlSetting: Setting<string> = {
  key: "url",
  env: "POSTGRES_URL",
  type: stringType,
  secret: "userinfo",
  label: "postgres URL",
  description: "Connection URL (postgres://user:password@host:port/db); replaces host, port, database, user, password.",
  check: (value) => {
    if (!isUrlWithScheme(value, ["postgres:", "postgresql:"])) {
      return "postgres URL must be a postgres:// or postgresql:// URL"
    }
    const mode = new URL(value).searchParams.get("sslmode")
    return mode === null || (sslModes as ReadonlyArray<string>).includes(mode)
      ? undefined
      : `postgres URL sslmode must be one of ${sslModes.join(", ")}`
  },
}

export const postgresHostSetting: Setting<string> = {
  key: "host",
  env: "POSTGRES_HOST",
  flag: "--postgres-host",
  type: stringType,
  default: "",
  secret: "none",
  label: "postgres host",
  description: "PostgreSQL server host.",
}

export const postgresPortSetting: Setting<number> = {
  key: "port",
  env: "POSTGRES_PORT",
  flag: "--postgres-port",
  type: intType,
  default: 5432,
  secret: "none",
  label: "postgres port",
  bounds: { min: 1, max: 65535 },
  description: "PostgreSQL server port.",
  check: (value) =>
    value > 0 && value <= 65535 ? undefined : `postgres port must be between 1 and 65535, got ${value}`,
}

export const postgresDatabaseSetting: Setting<string> = {
  key: "database",
  env: "POSTGRES_DB",
  flag: "--postgres-db",
  type: stringType,
  default: "",
  secret: "none",
  label: "postgres database",
  description: "Database name.",
}

export const postgresUserSetting: Setting<string> = {
  key: "user",
  env: "POSTGRES_USER",
  flag: "--postgres-user",
  type: stringType,
  default: "",
  secret: "none",
  label: "postgres user",
  description: "Database user.",
}

export const postgresPasswordSetting: Setting<string> = {
  key: "password",
  env: "POSTGRES_PASSWORD",
  type: stringType,
  default: "",
  secret: "value",
  label: "postgres password",
  description: "Database password.",
}

export const postgresSslModeSetting: Setting<SslMode> = {
  key: "sslmode",
  env: "POSTGRES_SSLMODE",
  flag: "--postgres-sslmode",
  type: enumType(sslModes),
  default: "require",
  secret: "none",
  label: "postgres sslmode",
  description:
    "TLS of the connection, as libpq: disable, require (no verification), verify-ca (chain), verify-full (chain and host name).",
}

export const postgresSslRootCertSetting: Setting<string> = {
  key: "sslrootcert",
  env: "POSTGRES_SSLROOTCERT",
  flag: "--postgres-sslrootcert",
  type: stringType,
  secret: "none",
  label: "postgres sslrootcert",
  description:
    "Path of the CA certificate verify-ca and verify-full check the server against; unset: the CAs Node trusts.",
}

export const postgresSchemaSetting: Setting<string> = {
  key: "schema",
  env: "POSTGRES_SCHEMA",
  flag: "--postgres-schema",
  type: stringType,
  default: "public",
  secret: "none",
  label: "postgres schema",
  description: "Schema of the tables (created by auto-migrate when missing).",
  check: (value) =>
    IDENTIFIER.test(value) && value.length <= 63
      ? undefined
      : "postgres schema must be an identifier of letters, digits and '_'",
}

export const postgresTableSetting: Setting<string> = {
  key: "table",
  env: "POSTGRES_TABLE",
  flag: "--postgres-table",
  type: stringType,
  default: "gpu_serials",
  secret: "none",
  label: "postgres table",
  description: "History table, one row per event (optionally schema.table); the current state is <table>_current.",
  check: (value) => {
    if (value === "") return "postgres table name cannot be empty"
    const parts = value.split(".")
    if (parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
      return "postgres table name must be an identifier of letters, digits and '_' (optionally schema.table)"
    }
    return (parts.at(-1) ?? "").length <= MAX_TABLE_LENGTH
      ? undefined
      : `postgres table name must be at most ${MAX_TABLE_LENGTH} characters`
  },
}

export const postgresAutoMigrateSetting: Setting<boolean> = {
  key: "autoMigrate",
  env: "POSTGRES_AUTO_MIGRATE",
  flag: "--postgres-auto-migrate",
  type: boolType,
  default: false,
  secret: "none",
  label: "postgres auto-migrate",
  description: "Whether the exporter creates and upgrades its tables and indexes at start; false: they must exist.",
}

const postgresRule: SettingRule = (values) => {
  // A connection URL carries host, database, user and password itself.
  if (values.get(postgresUrlSetting) !== undefined || values.origin(postgresUrlSetting).source !== "default") return []
  const missing = (setting: Setting<string>, message: string) =>
    values.get(setting)?.trim() === "" ? [{ setting, message }] : []
  return [
    ...missing(postgresHostSetting, "postgres host is required (set POSTGRES_HOST)"),
    ...missing(postgresDatabaseSetting, "postgres database name is required (set POSTGRES_DB)"),
    ...missing(postgresUserSetting, "postgres user is required (set POSTGRES_USER)"),
    ...missing(postgresPasswordSetting, "postgres password is required (set POSTGRES_PASSWORD)"),
  ]
}

/** Where and as whom the exporter connects: the URL's parts, or the separate settings. */
export interface PostgresConnectionSettings {
  readonly host: string
  readonly port: number
  readonly database: string
  readonly user: string
  readonly password: string
  readonly sslmode: SslMode
  readonly sslRootCertFile?: string
}

/** The `postgres` exporter's section. */
export interface PostgresExporterConfig {
  readonly connection: PostgresConnectionSettings
  readonly schema: string
  /** The history table; the current state is `<table>_current`, the applied migrations `<table>_migrations`. */
  readonly table: string
  readonly autoMigrate: boolean
  readonly queue: QueueSettings
}

/** The parts of a `postgres://` URL, decoded, so a password with spaces, quotes or `@` arrives intact. */
export const connectionOfUrl = (
  text: string,
  defaults: { readonly sslmode: SslMode; readonly port: number },
): Omit<PostgresConnectionSettings, "sslRootCertFile"> => {
  const url = new URL(text)
  const mode = url.searchParams.get("sslmode")
  return {
    host: decodeURIComponent(url.hostname).replace(/^\[(.*)\]$/, "$1"),
    port: url.port === "" ? defaults.port : Number(url.port),
    database: decodeURIComponent(url.pathname.replace(/^\//, "")),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    sslmode: mode === null ? defaults.sslmode : (mode as SslMode),
  }
}

/** The exporter's settings, in the order of the configuration reference. */
export const postgresSettings: ComponentSettings<PostgresExporterConfig> = {
  settings: [
    postgresUrlSetting,
    postgresHostSetting,
    postgresPortSetting,
    postgresDatabaseSetting,
    postgresUserSetting,
    postgresPasswordSetting,
    postgresSslModeSetting,
    postgresSslRootCertSetting,
    postgresSchemaSetting,
    postgresTableSetting,
    postgresAutoMigrateSetting,
    ...queueSettingList,
  ],
  rules: [postgresRule, queueSettingsRule],
  build: (values) => {
    const url = values.get(postgresUrlSetting)
    const sslmode = values.require(postgresSslModeSetting)
    const port = values.require(postgresPortSetting)
    const sslRootCertFile = values.get(postgresSslRootCertSetting)
    const [first = "", second] = values.require(postgresTableSetting).split(".")
    return {
      connection: {
        ...(url === undefined
          ? {
              host: values.require(postgresHostSetting),
              port,
              database: values.require(postgresDatabaseSetting),
              user: values.require(postgresUserSetting),
              password: values.require(postgresPasswordSetting),
              sslmode,
            }
          : connectionOfUrl(url, { sslmode, port })),
        ...(sslRootCertFile === undefined ? {} : { sslRootCertFile }),
      },
      // The Go original's `schema.table` form names the schema in the table setting.
      schema: second === undefined ? values.require(postgresSchemaSetting) : first,
      table: second ?? first,
      autoMigrate: values.require(postgresAutoMigrateSetting),
      queue: queueSettingsOf(values),
    }
  },
}
