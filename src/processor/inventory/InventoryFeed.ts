import { Context, Effect, Queue, Ref } from "effect"
import { type InventoryChange, mergeChanges } from "./InventoryChange.ts"

/**
 * The inventory's changes as they happen, for whoever mirrors the inventory outside the processor (the
 * node labeller). The processor publishes every batch of store changes, and at start an `Upsert` of every
 * GPU it loaded; publishing never waits. Changes not taken yet are merged one per UUID, so a slow or
 * absent reader holds at most one change per GPU and sees each GPU's latest change. One reader.
 */
export class InventoryFeed extends Context.Service<
  InventoryFeed,
  {
    /** Adds a batch of changes; never waits. */
    readonly publish: (changes: ReadonlyArray<InventoryChange>) => Effect.Effect<void>
    /** Waits until changes are waiting, then takes all of them, one per UUID, in the order they last changed. */
    readonly take: Effect.Effect<ReadonlyArray<InventoryChange>>
  }
>()("gpu-serials/processor/inventory/InventoryFeed") {
  static readonly make: Effect.Effect<InventoryFeed["Service"]> = Effect.gen(function* () {
    const waiting = yield* Ref.make<ReadonlyMap<string, InventoryChange>>(new Map())
    const wake = yield* Queue.sliding<true>(1)
    const publish = (changes: ReadonlyArray<InventoryChange>): Effect.Effect<void> =>
      changes.length === 0
        ? Effect.void
        : Ref.update(waiting, (held) => mergeChanges(held, changes)).pipe(Effect.andThen(Queue.offer(wake, true)))
    const take: Effect.Effect<ReadonlyArray<InventoryChange>> = Queue.take(wake).pipe(
      Effect.andThen(Ref.getAndSet(waiting, new Map())),
      Effect.flatMap((held) => (held.size === 0 ? take : Effect.succeed([...held.values()]))),
    )
    return InventoryFeed.of({ publish, take })
  })
}
