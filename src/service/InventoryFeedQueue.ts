import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import { followedBy, type InventoryChange } from "../domain/InventoryChange.ts"
import { InventoryFeed } from "../pipeline/InventoryFeed.ts"

/**
 * The feed of one leadership term: publishing never waits, and what waits is held one change per UUID
 * (a later change of a GPU replaces an earlier one, keeping where the reader had it: `followedBy`), so it
 * never outgrows the number of GPUs.
 */
export const make: Effect.Effect<InventoryFeed["Service"]> = Effect.gen(function* () {
  // Owned by the feed and changed in place: copying what waits on every publish would cost the
  // number of GPUs per batch while no reader takes.
  let waiting = new Map<string, InventoryChange>()
  const wake = yield* Queue.sliding<true, Cause.Done>(1)
  const publish = (changes: ReadonlyArray<InventoryChange>): Effect.Effect<void> =>
    changes.length === 0
      ? Effect.void
      : Effect.sync(() => {
          for (const change of changes) {
            const before = waiting.get(change.uuid)
            waiting.delete(change.uuid)
            waiting.set(change.uuid, followedBy(before, change))
          }
        }).pipe(Effect.andThen(Queue.offer(wake, true)))
  /** What waits, taken at once, or `otherwise` when nothing waits. */
  const takeWaiting = <E>(
    otherwise: Effect.Effect<ReadonlyArray<InventoryChange>, E>,
  ): Effect.Effect<ReadonlyArray<InventoryChange>, E> =>
    Effect.suspend(() => {
      if (waiting.size === 0) return otherwise
      const held = waiting
      waiting = new Map()
      return Effect.succeed([...held.values()])
    })
  const take: Effect.Effect<ReadonlyArray<InventoryChange>, Cause.Done> = Queue.take(wake).pipe(
    Effect.matchEffect({
      onSuccess: () => takeWaiting(take),
      onFailure: (done) => takeWaiting(Effect.fail(done)),
    }),
  )
  return InventoryFeed.of({ publish, take, end: Effect.asVoid(Queue.end(wake)) })
})
