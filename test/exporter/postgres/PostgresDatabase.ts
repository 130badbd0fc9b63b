import { randomBytes } from "node:crypto"
import pg from "pg"
import type { PostgresConnectionSettings } from "../../../src/exporter/postgres/PostgresConfig.ts"

/** The PostgreSQL of the machine: trust authentication on 127.0.0.1, database `test`. */
const server = { host: "127.0.0.1", port: 5432, user: "postgres" }

/** A fresh database for one test file, dropped by `dispose`. */
export interface TestDatabase {
  readonly name: string
  readonly connection: PostgresConnectionSettings
  /** Runs one statement on a connection of the test's own. */
  readonly query: <R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: ReadonlyArray<unknown>,
  ) => Promise<pg.QueryResult<R>>
  /** A role of the server named after the database, with `options` (`LOGIN PASSWORD '…'`), dropped by `dispose`. */
  readonly createRole: (suffix: string, options: string) => Promise<string>
  readonly dispose: () => Promise<void>
}

const admin = async <A>(body: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ ...server, database: "test" })
  await client.connect()
  try {
    return await body(client)
  } finally {
    await client.end()
  }
}

export const createTestDatabase = async (): Promise<TestDatabase> => {
  const name = `gpu_serials_test_${randomBytes(6).toString("hex")}`
  await admin((client) => client.query(`CREATE DATABASE ${name}`))
  const pool = new pg.Pool({ ...server, database: name, max: 2 })
  const roles: Array<string> = []
  return {
    name,
    connection: { ...server, database: name, password: "", sslmode: "disable" },
    query: (text, values) => pool.query(text, values as Array<unknown>),
    createRole: async (suffix, options) => {
      const role = `${name}_${suffix}`
      await admin((client) => client.query(`CREATE ROLE ${role} ${options}`))
      roles.push(role)
      return role
    },
    dispose: async () => {
      await pool.end()
      await admin(async (client) => {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
        for (const role of roles) await client.query(`DROP ROLE IF EXISTS ${role}`)
      })
    },
  }
}
