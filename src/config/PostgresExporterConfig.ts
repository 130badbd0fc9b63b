import { Result } from "effect"
import type { ConfigProblem } from "../component/Component.ts"
import { decodeExporterSection } from "./ExporterSection.ts"
import {
  postgresAutoMigrateSetting,
  postgresDatabaseSetting,
  postgresHostSetting,
  postgresPasswordSetting,
  postgresPortSetting,
  postgresSslModeSetting,
  postgresTableSetting,
  postgresUrlSetting,
  postgresUserSetting,
} from "./Settings.ts"

export type PostgresSslMode = "disable" | "allow" | "prefer" | "require" | "verify-ca" | "verify-full"

/**
 * The `postgres` exporter's section: the Go original's POSTGRES_* variables, plus a connection URL that
 * replaces host, port, database, user and password when set.
 */
export interface PostgresExporterConfig {
  /** Secret: may carry the password. */
  readonly url?: string
  readonly host: string
  readonly port: number
  readonly database: string
  readonly user: string
  /** Secret. */
  readonly password: string
  readonly sslmode: PostgresSslMode
  /** Readings table, optionally `schema.table`. */
  readonly table: string
  /** Whether the exporter creates its tables and indexes at start. */
  readonly autoMigrate: boolean
}

/** Checks a `postgres` section; problems carry keys relative to the section. */
export const decodePostgresExporterConfig = (
  section: unknown,
): Result.Result<PostgresExporterConfig, ReadonlyArray<ConfigProblem>> =>
  Result.map(decodeExporterSection("postgres", section), (values) => {
    const url = values.get(postgresUrlSetting)
    return {
      ...(url === undefined ? {} : { url }),
      host: values.require(postgresHostSetting),
      port: values.require(postgresPortSetting),
      database: values.require(postgresDatabaseSetting),
      user: values.require(postgresUserSetting),
      password: values.require(postgresPasswordSetting),
      sslmode: values.require(postgresSslModeSetting),
      table: values.require(postgresTableSetting),
      autoMigrate: values.require(postgresAutoMigrateSetting),
    }
  })
