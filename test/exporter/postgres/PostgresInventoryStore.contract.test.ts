import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import * as PostgresInventoryStore from "../../../src/exporter/postgres/PostgresInventoryStore.ts"
import { detachedNodes, inventoryStoreContract } from "../../pipeline/InventoryStoreContract.ts"
import { createTestDatabase, type TestDatabase } from "./PostgresDatabase.ts"
import { exporterConfig } from "./PostgresFixture.ts"

let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase()
})

afterAll(async () => {
  await database?.dispose()
})

let tables = 0

inventoryStoreContract({
  kind: "postgres",
  storeSetting: "postgres",
  backendOfClusters: "sharing the same tables",
  capabilities: { keepsDeletedNodes: true, keepsReadingFacts: true, keepsHealth: true },
  backend: () =>
    Effect.sync(() => {
      // The database, dropped once the file ran, takes every scenario's tables with it.
      const config = exporterConfig(database.connection, { table: `contract_${++tables}` })
      return {
        open: (cluster) => PostgresInventoryStore.storeFactory.create(config, { clusterName: cluster, id: "postgres" }),
        nodes: () => Effect.succeed(detachedNodes),
        keep: () => Effect.void,
        deleteNode: () => Effect.void,
      }
    }),
})
