import { Effect } from "effect"
import * as MemoryInventoryStore from "../../../src/processor/inventory/MemoryInventoryStore.ts"
import { detachedNodes, inventoryStoreContract } from "../../pipeline/InventoryStoreContract.ts"

inventoryStoreContract({
  kind: "memory",
  storeSetting: "memory",
  backendOfClusters: "each in the memory of its own process",
  capabilities: { keepsDeletedNodes: true, keepsReadingFacts: true, keepsHealth: true },
  // The backend is one process per cluster: every run is a processor restarted within that process, on its memory.
  backend: (clusters) =>
    Effect.gen(function* () {
      const memories = new Map<string, MemoryInventoryStore.MemoryInventoryStore>()
      for (const cluster of clusters) memories.set(cluster, yield* MemoryInventoryStore.make())
      return {
        open: (cluster) => {
          const memory = memories.get(cluster)
          return memory === undefined
            ? Effect.die(new Error(`no process for cluster ${cluster}`))
            : Effect.succeed(memory.store)
        },
        nodes: () => Effect.succeed(detachedNodes),
        keep: () => Effect.void,
        deleteNode: () => Effect.void,
      }
    }),
})
