import { Result } from "effect"
import { describe, expect, it } from "vitest"
import type { ConfigProblem } from "../../../src/component/Component.ts"
import { connectionOfUrl } from "../../../src/exporter/postgres/PostgresConfig.ts"
import * as PostgresExporter from "../../../src/exporter/postgres/PostgresExporter.ts"
import { poolConfig, tlsOptions } from "../../../src/exporter/postgres/PostgresPool.ts"
import { gpuSerials } from "../../cli/GpuSerialsCli.ts"
import { configOf, problemsOf } from "../../config/ResolveFixture.ts"

const cluster = { CLUSTER_NAME: "prod" }

const sectionProblems = (section: unknown): ReadonlyArray<ConfigProblem> => {
  const outcome = PostgresExporter.factory.validate(section)
  return Result.isFailure(outcome) ? outcome.failure : []
}

const server = { host: "db", port: 5432, database: "gpuid", user: "gpuid", password: "pw" }

describe("postgres exporter config", () => {
  it("check the postgres exporter with the Go original's messages", () => {
    expect(problemsOf({ env: { ...cluster, EXPORTER_TYPE: "postgres", POSTGRES_PORT: "70000" } })).toEqual([
      { key: "POSTGRES_DB", message: "postgres database name is required (set POSTGRES_DB)" },
      { key: "POSTGRES_HOST", message: "postgres host is required (set POSTGRES_HOST)" },
      { key: "POSTGRES_PASSWORD", message: "postgres password is required (set POSTGRES_PASSWORD)" },
      { key: "POSTGRES_PORT", message: "postgres port must be between 1 and 65535, got 70000" },
      { key: "POSTGRES_USER", message: "postgres user is required (set POSTGRES_USER)" },
    ])
    const withUrl = { ...cluster, EXPORTER_TYPE: "postgres", POSTGRES_URL: "postgres://u:p@db/gpuid" }
    expect(problemsOf({ env: withUrl, argv: ["--postgres-table="] })).toEqual([
      { key: "--postgres-table", message: "postgres table name cannot be empty" },
    ])
    // An empty variable means the default, as in the Go original.
    expect(configOf({ env: { ...withUrl, POSTGRES_TABLE: "" } }).exporters[0]?.section).toMatchObject({
      table: "gpu_serials",
    })
    const config = configOf({
      env: {
        ...cluster,
        EXPORTER_TYPE: "postgres",
        POSTGRES_HOST: "db",
        POSTGRES_DB: "gpuid",
        POSTGRES_USER: "gpuid",
        POSTGRES_PASSWORD: "pw",
      },
    })
    expect(config.exporters[0]?.section).toMatchObject({
      host: "db",
      port: 5432,
      database: "gpuid",
      user: "gpuid",
      password: "pw",
      sslmode: "require",
      schema: "public",
      table: "gpu_serials",
      autoMigrate: false,
    })
  })

  it("lets the inventory keep its store in the current-state table of a postgres exporter of the pipeline", () => {
    const env = { ...cluster, POSTGRES_URL: "postgres://u:p@db/gpuid", INVENTORY_STORE: "postgres" }
    expect(configOf({ env: { ...env, EXPORTER_TYPE: "stdout,postgres" } }).inventory.store).toBe("postgres")
    const kept = gpuSerials(["config", "validate"], { env: { ...env, EXPORTER_TYPE: "stdout,postgres" } })
    expect(kept.stderr).toBe("")
    expect(kept.status).toBe(0)
    const refused = gpuSerials(["config", "validate"], { env: { ...env, EXPORTER_TYPE: "stdout" } })
    expect(refused.status).toBe(2)
    expect(refused.stderr).toContain(
      'INVENTORY_STORE: inventory store "postgres" is neither memory, node-labels nor an exporter of the pipeline that keeps a store (types: nats, postgres)',
    )
  })

  it("refuses what libpq would not do alike, bad names and bad URLs", () => {
    const env = { ...cluster, EXPORTER_TYPE: "postgres", POSTGRES_URL: "postgres://u:p@db/gpuid" }
    expect(
      problemsOf({
        env: { ...env, POSTGRES_SSLMODE: "prefer", POSTGRES_TABLE: "gpu-serials", POSTGRES_SCHEMA: "a b" },
      }),
    ).toEqual([
      { key: "POSTGRES_SCHEMA", message: "postgres schema must be an identifier of letters, digits and '_'" },
      {
        key: "POSTGRES_SSLMODE",
        message: 'postgres sslmode must be one of disable, require, verify-ca, verify-full, got "prefer"',
      },
      {
        key: "POSTGRES_TABLE",
        message: "postgres table name must be an identifier of letters, digits and '_' (optionally schema.table)",
      },
    ])
    expect(problemsOf({ env: { ...env, POSTGRES_URL: "postgres://db/gpuid?sslmode=allow" } })).toEqual([
      { key: "POSTGRES_URL", message: "postgres URL sslmode must be one of disable, require, verify-ca, verify-full" },
    ])
    expect(problemsOf({ env: { ...env, POSTGRES_URL: "mysql://db/gpuid" } })).toEqual([
      { key: "POSTGRES_URL", message: "postgres URL must be a postgres:// or postgresql:// URL" },
    ])
  })

  it("checks a section on its own: the defaults ask for a server, a URL or the separate settings give one", () => {
    expect(sectionProblems({}).map((problem) => problem.key)).toEqual(["host", "database", "user", "password"])
    expect(sectionProblems({ url: "postgres://u:p@db/gpuid" })).toEqual([])
    expect(sectionProblems(server)).toEqual([])
    expect(sectionProblems({ ...server, table: "x".repeat(41), autoMigrate: "sometimes" }).map((p) => p.key)).toEqual([
      "table",
      "autoMigrate",
    ])
    const built = PostgresExporter.factory.validate({ ...server, table: "inventory.gpus" })
    expect(Result.isSuccess(built) && [built.success.schema, built.success.table]).toEqual(["inventory", "gpus"])
  })

  it("takes the URL apart so that a password with spaces, quotes, ':' or '@' arrives intact", () => {
    const password = `p@ss w'o"rd:/?#%`
    const url = `postgresql://gpu%20serials:${encodeURIComponent(password)}@db.example.com:6432/gpu%20id?sslmode=verify-full`
    const connection = connectionOfUrl(url, { sslmode: "require", port: 5432 })
    expect(connection).toEqual({
      host: "db.example.com",
      port: 6432,
      database: "gpu id",
      user: "gpu serials",
      password,
      sslmode: "verify-full",
    })
    const built = PostgresExporter.factory.validate({ url })
    expect(Result.isSuccess(built) && built.success.connection.password).toBe(password)
    const separate = PostgresExporter.factory.validate({ ...server, password })
    expect(Result.isSuccess(separate) && separate.success.connection.password).toBe(password)
    expect(poolConfig(connection, { statementTimeout: 5000, maxConnections: 1 })).toMatchObject({
      password,
      user: "gpu serials",
      application_name: "gpu-serials",
      statement_timeout: 5000,
    })
    expect(connectionOfUrl("postgres://u@[::1]/db", { sslmode: "disable", port: 5433 })).toMatchObject({
      host: "::1",
      port: 5433,
      sslmode: "disable",
    })
  })

  it("does what libpq does for each sslmode", () => {
    const connection = { ...server, sslmode: "disable" as const }
    expect(tlsOptions(connection)).toBe(false)
    expect(tlsOptions({ ...connection, sslmode: "require" })).toEqual({ rejectUnauthorized: false })
    const verifyCa = tlsOptions({ ...connection, sslmode: "verify-ca" })
    expect(verifyCa).toMatchObject({ rejectUnauthorized: true })
    // verify-ca checks the chain only: any host name passes.
    expect(verifyCa !== false && verifyCa.checkServerIdentity?.("other.example.com", {} as never)).toBeUndefined()
    const verifyFull = tlsOptions({ ...connection, sslmode: "verify-full" })
    expect(verifyFull).toEqual({ rejectUnauthorized: true })
  })
})
