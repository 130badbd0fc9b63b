import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type { InventoryChange } from "./InventoryChange.ts"

/**
 * The inventory's changes as they happen, for whoever mirrors the inventory outside the processor (the
 * node labeller). The processor publishes every batch of store changes, and at start an `Upsert` of every
 * GPU it loaded; publishing never waits. Changes not taken yet are merged one per UUID, so a slow or
 * absent reader holds at most one change per GPU and sees each GPU's latest change. One reader.
 */
export class InventoryFeed extends Context.Service<
  InventoryFeed,
  {
    /** Adds a batch of changes; never waits, and costs what the batch holds, whatever is waiting. */
    readonly publish: (changes: ReadonlyArray<InventoryChange>) => Effect.Effect<void>
    /** Waits until changes are waiting, then takes all of them, one per UUID, in the order they last changed. */
    readonly take: Effect.Effect<ReadonlyArray<InventoryChange>>
  }
>()("gpu-serials/processor/inventory/InventoryFeed") {
  static readonly make: Effect.Effect<InventoryFeed["Service"]> = Effect.gen(function* () {
    // Owned by the feed and changed in place: copying what waits on every publish would cost the
    // number of GPUs per batch while no reader takes.
    let waiting = new Map<string, InventoryChange>()
    const wake = yield* Queue.sliding<true>(1)
    const publish = (changes: ReadonlyArray<InventoryChange>): Effect.Effect<void> =>
      changes.length === 0
        ? Effect.void
        : Effect.sync(() => {
            for (const change of changes) {
              waiting.delete(change.uuid)
              waiting.set(change.uuid, change)
            }
          }).pipe(Effect.andThen(Queue.offer(wake, true)))
    const takeWaiting = Effect.sync(() => {
      const held = waiting
      waiting = new Map()
      return held
    })
    const take: Effect.Effect<ReadonlyArray<InventoryChange>> = Queue.take(wake).pipe(
      Effect.andThen(takeWaiting),
      Effect.flatMap((held) => (held.size === 0 ? take : Effect.succeed([...held.values()]))),
    )
    return InventoryFeed.of({ publish, take })
  })
}
