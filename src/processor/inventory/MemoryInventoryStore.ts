import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { KnownGpu } from "../../domain/KnownGpu.ts"
import { InventoryStore, type StoreFactory, standaloneStore } from "../../pipeline/InventoryStore.ts"
import { memoryStoreName } from "./InventoryConfig.ts"

/** The memory store, plus what it holds now (for tests and diagnostics). */
export interface MemoryInventoryStore {
  readonly store: InventoryStore["Service"]
  readonly current: Effect.Effect<ReadonlyArray<KnownGpu>>
}

/**
 * An inventory store in memory, starting with `initial`: it survives a restart of the processor
 * within one process, not of the process. Never fails.
 */
export const make = (initial: ReadonlyArray<KnownGpu> = []): Effect.Effect<MemoryInventoryStore> =>
  Effect.sync(() => {
    // Updated in place: a batch is applied synchronously, and readers only ever get a copy of the values.
    const held = new Map(initial.map((gpu) => [gpu.uuid, gpu]))
    const current = Effect.sync(() => [...held.values()])
    const store = InventoryStore.of({
      kind: "memory",
      load: current,
      apply: (changes) =>
        Effect.sync(() => {
          for (const change of changes) {
            if (change._tag === "Upsert") held.set(change.uuid, change.gpu)
            else held.delete(change.uuid)
          }
        }),
    })
    return { store, current }
  })

/** An empty memory store as the `InventoryStore` service. */
export const layer: Layer.Layer<InventoryStore> = Layer.effect(
  InventoryStore,
  Effect.map(make(), (memory) => memory.store),
)

/**
 * The `memory` store as the service opens it, once per leadership term: the term starts empty, as a
 * restarted process does, and what it learns lives in the inventory processor, which loads the store
 * once, at the start of the term. No one reads it again (a follower's fleet API reads no memory store),
 * so it keeps no copy: a second map of every GPU by UUID cost 7 MB at 50,000 nodes.
 */
const termStore: InventoryStore["Service"] = InventoryStore.of({
  kind: "memory",
  load: Effect.succeed([]),
  apply: () => Effect.void,
})

/**
 * The `memory` store: what one leadership term of one process learnt. The service opens the store for
 * each term, so a replica that leads again starts empty, as a restarted process does (another replica
 * may have changed the fleet meanwhile); a durable store carries the inventory across both.
 */
export const storeFactory: StoreFactory = {
  ...standaloneStore(memoryStoreName),
  create: () => Effect.succeed(termStore),
}
