import pg from "pg"
import { natsServerExecutable, startNatsServer } from "../test/exporter/nats/NatsServer.ts"

/** The inventory stores a service can keep what it knows in, each an accuracy scenario of its own. */
export const storeNames = ["memory", "nats", "postgres", "node-labels"] as const
export type StoreName = (typeof storeNames)[number]

/** One store made ready for a service: the settings that select it, and how to clean it up after. */
export interface StoreScenario {
  readonly store: StoreName
  /** Whether what the service knew survives its restart (every store but `memory`). */
  readonly durable: boolean
  /** Whether it keeps the GPUs of a node deleted while no process watched, for the next to remove. */
  readonly keepsGoneNodes: boolean
  /** Whether it keeps each GPU's last health, so a new process reports a change against it. */
  readonly keepsHealth: boolean
  /** Whether it keeps one GPU per index of a node, the one seen last (the node labels). */
  readonly keepsOneGpuPerIndex: boolean
  /** Settings of the service (environment variables) that select and configure the store. */
  readonly env: Readonly<Record<string, string>>
  readonly close: () => Promise<void>
}

export interface StoreSetup {
  /** `postgres://…` of a database the run may create a schema in. */
  readonly postgresUrl: string
  /** Makes names that parallel runs do not share (NATS bucket and subjects, PostgreSQL schema). */
  readonly unique: string
}

const postgresReachable = async (url: string): Promise<string | undefined> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 })
  try {
    await client.connect()
    await client.query("SELECT 1")
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  } finally {
    await client.end().catch(() => undefined)
  }
}

/**
 * Makes a store ready: `memory` needs nothing; `nats` a nats-server of its own with JetStream, whose KV
 * bucket the service's `nats` exporter keeps; `postgres` a schema of its own in the given database, which
 * the `postgres` exporter creates and which is dropped after; `node-labels` the node labels the service
 * writes (LABELS_ENABLED). Resolves why not when the store cannot be had on this machine.
 */
export const prepareStore = async (
  store: StoreName,
  setup: StoreSetup,
): Promise<StoreScenario | { readonly unavailable: string }> => {
  switch (store) {
    case "memory":
      return {
        store,
        durable: false,
        keepsGoneNodes: false,
        keepsHealth: false,
        keepsOneGpuPerIndex: false,
        env: { EXPORTER_TYPE: "stdout", INVENTORY_STORE: "memory", LABELS_ENABLED: "false" },
        close: async () => undefined,
      }
    case "nats": {
      if (natsServerExecutable() === undefined) return { unavailable: "no nats-server on the PATH or in /usr/sbin" }
      const server = await startNatsServer()
      return {
        store,
        durable: true,
        keepsGoneNodes: true,
        keepsHealth: true,
        keepsOneGpuPerIndex: false,
        env: {
          EXPORTER_TYPE: "stdout,nats",
          INVENTORY_STORE: "nats",
          LABELS_ENABLED: "false",
          NATS_URL: server.url,
          NATS_KV_BUCKET: `accuracy_${setup.unique}`,
          NATS_SUBJECT_PREFIX: `accuracy.${setup.unique}`,
        },
        close: server.dispose,
      }
    }
    case "postgres": {
      const problem = await postgresReachable(setup.postgresUrl)
      if (problem !== undefined) return { unavailable: `PostgreSQL not reachable: ${problem}` }
      const schema = `accuracy_${setup.unique}`
      return {
        store,
        durable: true,
        keepsGoneNodes: true,
        keepsHealth: true,
        keepsOneGpuPerIndex: false,
        env: {
          EXPORTER_TYPE: "stdout,postgres",
          INVENTORY_STORE: "postgres",
          LABELS_ENABLED: "false",
          POSTGRES_URL: setup.postgresUrl,
          POSTGRES_SSLMODE: "disable",
          POSTGRES_SCHEMA: schema,
          POSTGRES_AUTO_MIGRATE: "true",
        },
        close: async () => {
          const client = new pg.Client({ connectionString: setup.postgresUrl, connectionTimeoutMillis: 3_000 })
          await client.connect()
          try {
            await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
          } finally {
            await client.end()
          }
        },
      }
    }
    case "node-labels":
      return {
        store,
        durable: true,
        // The labels that held a node's GPUs are deleted with the node.
        keepsGoneNodes: false,
        // The labels hold where each GPU is, not its health.
        keepsHealth: false,
        // A label per index: of a GPU that left in a swap and the one read in its place, the labels keep the latter.
        keepsOneGpuPerIndex: true,
        env: { EXPORTER_TYPE: "stdout", INVENTORY_STORE: "node-labels", LABELS_ENABLED: "true" },
        close: async () => undefined,
      }
  }
}
