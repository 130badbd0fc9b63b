import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { ComponentStartError } from "../../src/component/ComponentStartError.ts"
import type { KnownGpu } from "../../src/domain/KnownGpu.ts"
import { Fleet } from "../../src/fleet/Fleet.ts"
import { InventoryStoreError, InventoryStores } from "../../src/pipeline/InventoryStore.ts"
import { followFromStore } from "../../src/service/FleetFollower.ts"
import { knownGpu } from "../fleet/FleetFixtures.ts"

/** Stores that answer `load` from `contents`, as the leader last wrote them; `refused` cannot be opened. */
const storesOver = (contents: { current: ReadonlyArray<KnownGpu> | "failing" }) =>
  InventoryStores.of({
    named: (name) =>
      name === "refused"
        ? Effect.fail(new ComponentStartError({ component: "inventory", message: "no such bucket" }))
        : Effect.succeed({
            kind: "nats-kv",
            load: Effect.suspend(() =>
              contents.current === "failing"
                ? Effect.fail(
                    new InventoryStoreError({
                      store: "nats-kv",
                      operation: "load",
                      message: "timeout",
                      conflict: false,
                    }),
                  )
                : Effect.succeed(contents.current),
            ),
            apply: () => Effect.void,
          }),
  })

const follower = () => {
  const fleet = Fleet.make({ cluster: "test", eventCapacity: 10 })
  fleet.setRole({ role: "follower", source: "none", leader: "replica-a" })
  return fleet
}

const eventually = (check: () => boolean) =>
  Effect.gen(function* () {
    for (let attempt = 0; attempt < 200 && !check(); attempt++) yield* Effect.sleep("10 millis")
    assert.isTrue(check())
  })

describe("a follower's fleet API", () => {
  it.live("answers the GPUs of the durable store, read again as the leader changes it", () =>
    Effect.gen(function* () {
      const fleet = follower()
      const contents: { current: ReadonlyArray<KnownGpu> | "failing" } = {
        current: [
          knownGpu({ uuid: "GPU-1", node: "node-a", index: 0 }),
          knownGpu({ uuid: "GPU-2", node: "node-a", index: 1 }),
        ],
      }
      const running = yield* Effect.forkChild(
        followFromStore({ fleet, stores: storesOver(contents), storeName: "nats", refreshInterval: "20 millis" }),
      )
      yield* eventually(() => fleet.view.gpus.size === 2)
      assert.deepStrictEqual(fleet.role(), { role: "follower", source: "store", leader: "replica-a" })
      contents.current = [knownGpu({ uuid: "GPU-1", node: "node-b", index: 0 })]
      yield* eventually(() => fleet.view.gpus.size === 1 && fleet.view.gpus.get("GPU-1")?.known.node === "node-b")
      contents.current = "failing"
      yield* Effect.sleep("60 millis")
      assert.strictEqual(fleet.view.gpus.size, 1)
      yield* Fiber.interrupt(running)
    }),
  )

  it.live("reads nothing from the memory store, and stops when the store cannot be opened", () =>
    Effect.gen(function* () {
      const fleet = follower()
      const stores = storesOver({ current: [knownGpu({ uuid: "GPU-1", node: "node-a", index: 0 })] })
      yield* followFromStore({ fleet, stores, storeName: "memory" })
      yield* followFromStore({ fleet, stores, storeName: "refused" })
      assert.strictEqual(fleet.view.gpus.size, 0)
      assert.strictEqual(fleet.role().source, "none")
    }),
  )
})
