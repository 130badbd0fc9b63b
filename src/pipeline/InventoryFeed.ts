// pipeline/ holds contracts only: what one component offers another, so that none imports a sibling.
import type * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { InventoryChange } from "../domain/InventoryChange.ts"

/**
 * The inventory's changes as they happen, for whoever mirrors the inventory outside the processor (the
 * node labeller). The processor publishes every batch of store changes, and at start an `Upsert` of every
 * GPU it loaded; publishing never waits. Changes not taken yet are merged one per UUID, so a slow or
 * absent reader holds at most one change per GPU and sees each GPU's latest change. One reader. The
 * service ends the feed once the inventory has applied the term's last observation, so that the reader
 * knows, when it closes, that it has taken the inventory's last changes.
 */
export class InventoryFeed extends Context.Service<
  InventoryFeed,
  {
    /** Adds a batch of changes; never waits, and costs what the batch holds, whatever is waiting. */
    readonly publish: (changes: ReadonlyArray<InventoryChange>) => Effect.Effect<void>
    /**
     * Waits until changes are waiting, then takes all of them, one per UUID, in the order they last
     * changed; fails with `Done` once the feed has ended and nothing is waiting.
     */
    readonly take: Effect.Effect<ReadonlyArray<InventoryChange>, Cause.Done>
    /** The inventory publishes nothing more: what waits is still taken, then `take` fails with `Done`. */
    readonly end: Effect.Effect<void>
  }
>()("gpu-serials/pipeline/InventoryFeed") {}
