import { Kvm } from "@nats-io/kv"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Effect, Result } from "effect"
import { afterAll, beforeAll } from "vitest"
import * as NatsExporter from "../../../src/exporter/nats/NatsExporter.ts"
import * as NatsKvInventoryStore from "../../../src/exporter/nats/NatsKvInventoryStore.ts"
import { detachedNodes, inventoryStoreContract } from "../../pipeline/InventoryStoreContract.ts"
import { type NatsServer, startNatsServer } from "./NatsServer.ts"

let server: NatsServer
let connection: NatsConnection

beforeAll(async () => {
  server = await startNatsServer()
  connection = await connect({ servers: server.url })
})

afterAll(async () => {
  await connection?.drain()
  await server?.dispose()
})

let buckets = 0

/** The config of the `nats` exporter that keeps the store, as its own settings build it. */
const exporterConfig = (bucket: string) => {
  const config = NatsExporter.factory.validate({ url: server.url, kvBucket: bucket })
  if (Result.isFailure(config)) throw new Error(`nats config refused: ${JSON.stringify(config.failure)}`)
  return config.success
}

inventoryStoreContract({
  kind: "nats-kv",
  storeSetting: "nats",
  backendOfClusters: "sharing one KV bucket",
  capabilities: { keepsDeletedNodes: true, keepsReadingFacts: true, keepsHealth: true },
  backend: () =>
    Effect.gen(function* () {
      const bucket = `contract_${++buckets}`
      const config = exporterConfig(bucket)
      // Every scenario opens the store, which creates the bucket.
      yield* Effect.addFinalizer(() => Effect.promise(async () => (await new Kvm(connection).open(bucket)).destroy()))
      return {
        open: (cluster) => NatsKvInventoryStore.storeFactory.create(config, { clusterName: cluster, id: "nats" }),
        nodes: () => Effect.succeed(detachedNodes),
        keep: () => Effect.void,
        deleteNode: () => Effect.void,
      }
    }),
})
