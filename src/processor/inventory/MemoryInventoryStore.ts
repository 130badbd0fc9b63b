import { Effect, Layer, Ref } from "effect"
import type { InventoryChange } from "./InventoryChange.ts"
import { InventoryStore } from "./InventoryStore.ts"
import type { KnownGpu } from "./KnownGpu.ts"

/** The memory store, plus what it holds now (for tests and diagnostics). */
export interface MemoryInventoryStore {
  readonly store: InventoryStore["Service"]
  readonly current: Effect.Effect<ReadonlyArray<KnownGpu>>
}

const applied = (
  held: ReadonlyMap<string, KnownGpu>,
  changes: ReadonlyArray<InventoryChange>,
): ReadonlyMap<string, KnownGpu> => {
  const next = new Map(held)
  for (const change of changes) {
    if (change._tag === "Upsert") next.set(change.uuid, change.gpu)
    else next.delete(change.uuid)
  }
  return next
}

/**
 * An inventory store in memory, starting with `initial`: it survives a restart of the processor
 * within one process, not of the process. Never fails.
 */
export const make = (initial: ReadonlyArray<KnownGpu> = []): Effect.Effect<MemoryInventoryStore> =>
  Effect.gen(function* () {
    const held = yield* Ref.make<ReadonlyMap<string, KnownGpu>>(new Map(initial.map((gpu) => [gpu.uuid, gpu])))
    const current = Ref.get(held).pipe(Effect.map((gpus) => [...gpus.values()]))
    const store = InventoryStore.of({
      kind: "memory",
      load: current,
      apply: (changes) => Ref.update(held, (gpus) => applied(gpus, changes)),
    })
    return { store, current }
  })

/** An empty memory store as the `InventoryStore` service. */
export const layer: Layer.Layer<InventoryStore> = Layer.effect(
  InventoryStore,
  Effect.map(make(), (memory) => memory.store),
)
