import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import type { PostgresConnectionSettings, SslMode } from "../../../src/exporter/postgres/PostgresConfig.ts"
import * as PostgresPool from "../../../src/exporter/postgres/PostgresPool.ts"
import { startTlsPostgresServer, type TlsPostgresServer } from "./TlsPostgresServer.ts"

let server: TlsPostgresServer

beforeAll(async () => {
  server = await startTlsPostgresServer()
})

afterAll(async () => {
  await server?.close()
})

/** What connecting with `sslmode` meets: the server's refusal (TLS or not), or the client's own failure. */
const attempt = (sslmode: SslMode, options: { readonly host?: string; readonly withCa?: boolean } = {}) =>
  Effect.gen(function* () {
    const settings: PostgresConnectionSettings = {
      host: options.host ?? "127.0.0.1",
      port: server.port,
      database: "gpu_serials",
      user: "gpu_serials",
      password: "pw",
      sslmode,
      ...(options.withCa === false ? {} : { sslRootCertFile: server.caFile }),
    }
    const pool = yield* PostgresPool.scoped(settings, { statementTimeout: "5 seconds", maxConnections: 1, name: "tls" })
    return yield* Effect.flip(PostgresPool.transaction(pool, (client) => client.query("SELECT 1")))
  }).pipe(Effect.scoped)

describe("postgres sslmode, as libpq", () => {
  it.live("disable: no TLS", () =>
    Effect.gen(function* () {
      const failure = yield* attempt("disable")
      assert.strictEqual(failure.message, "plain connection refused by the test server (SQLSTATE 28000)")
      assert.isFalse(failure.retryable)
    }),
  )

  it.live("require: TLS, whoever signed the certificate", () =>
    Effect.gen(function* () {
      const failure = yield* attempt("require", { withCa: false })
      assert.strictEqual(failure.message, "TLS connection reached the test server (SQLSTATE 28000)")
    }),
  )

  it.live("verify-ca: the chain must lead to the CA, the host name does not matter", () =>
    Effect.gen(function* () {
      assert.strictEqual(
        (yield* attempt("verify-ca")).message,
        "TLS connection reached the test server (SQLSTATE 28000)",
      )
      const untrusted = yield* attempt("verify-ca", { withCa: false })
      assert.notInclude(untrusted.message, "reached the test server")
      assert.isFalse(untrusted.retryable)
    }),
  )

  it.live("verify-full: the chain and the host name", () =>
    Effect.gen(function* () {
      assert.strictEqual(
        (yield* attempt("verify-full", { host: "localhost" })).message,
        "TLS connection reached the test server (SQLSTATE 28000)",
      )
      const otherName = yield* attempt("verify-full", { host: "127.0.0.1" })
      assert.match(otherName.message, /does not match|not in the cert's/i)
      assert.isFalse(otherName.retryable)
    }),
  )
})
