import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { upsert } from "../domain/InventoryChange.ts"
import type { Fleet } from "../fleet/Fleet.ts"
import type { InventoryStores } from "../pipeline/InventoryStore.ts"

/** How often a follower reads the durable store again, and the deadline of one read. */
export const storeRefreshInterval = Duration.seconds(30)
export const storeReadTimeout = Duration.seconds(10)

/**
 * While this replica follows, the fleet API answers from the durable inventory store the leader writes:
 * the store is opened for the time of following and read through its own `load`, with a deadline, every
 * `storeRefreshInterval`, each read replacing the GPUs the API knows (`source: "store"`). A store that
 * cannot be opened or read is logged; the API then answers what it read last, or nothing. Runs until
 * interrupted (the replica leads).
 */
export const followFromStore = (options: {
  readonly fleet: Fleet["Service"]
  readonly stores: InventoryStores["Service"]
  /** The inventory's `store` setting; `memory` is no store another replica can read. */
  readonly storeName: string
  readonly refreshInterval?: Duration.Input
}): Effect.Effect<void> => {
  const { fleet, storeName } = options
  if (storeName === "memory") return Effect.void
  const refresh = Duration.fromInputUnsafe(options.refreshInterval ?? storeRefreshInterval)
  return Effect.scoped(
    Effect.gen(function* () {
      const store = yield* options.stores.named(storeName)
      const readOnce = store.load.pipe(
        Effect.timeoutOrElse({
          duration: storeReadTimeout,
          orElse: () => Effect.fail({ message: `no answer within ${Duration.format(storeReadTimeout)}` }),
        }),
        Effect.flatMap((gpus) =>
          Effect.sync(() => {
            fleet.view.clearInventory()
            fleet.view.apply(gpus.map(upsert))
            const role = fleet.role()
            if (role.role === "follower") fleet.setRole({ ...role, source: "store" })
          }),
        ),
        Effect.catch((error: { readonly message: string }) =>
          Effect.logWarning("fleet API could not read the inventory store").pipe(
            Effect.annotateLogs({ store: storeName, reason: error.message }),
          ),
        ),
      )
      yield* readOnce.pipe(Effect.repeat(Schedule.spaced(refresh)))
    }),
  ).pipe(
    Effect.catch((error) =>
      Effect.logWarning("fleet API could not open the inventory store").pipe(
        Effect.annotateLogs({ store: storeName, reason: error.message }),
      ),
    ),
  )
}
