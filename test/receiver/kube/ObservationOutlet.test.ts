import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Queue } from "effect"
import { TestClock } from "effect/testing"
import type { NodeObservation } from "../../../src/domain/NodeObservation.ts"
import * as ObservationOutlet from "../../../src/receiver/kube/ObservationOutlet.ts"

const goneOf = (name: string): NodeObservation => ({
  _tag: "NodeGone",
  node: { name },
  time: new Date(0),
  reason: "pod-deleted",
})

/** The node an observation is about; these tests hand over only observations of one node. */
const nodeOf = (observation: NodeObservation): string =>
  observation._tag === "ClusterListed" ? "" : observation.node.name

describe("ObservationOutlet", () => {
  it.effect("hands observations over in order and makes producers wait when full", () =>
    Effect.gen(function* () {
      const outlet = yield* ObservationOutlet.make(2)
      assert.strictEqual(yield* outlet.handOff(goneOf("a")), "handed")
      assert.strictEqual(yield* outlet.handOff(goneOf("b")), "handed")
      const third = yield* Effect.forkChild(outlet.handOff(goneOf("c")))
      yield* TestClock.adjust("1 minute")
      assert.isUndefined(third.pollUnsafe())
      const taken = [yield* Queue.take(outlet.observations)]
      assert.strictEqual(yield* Fiber.join(third), "handed")
      taken.push(yield* Queue.take(outlet.observations), yield* Queue.take(outlet.observations))
      assert.deepStrictEqual(taken.map(nodeOf), ["a", "b", "c"])
    }),
  )

  it.effect("gives up at the producer's deadline when the consumer does not take", () =>
    Effect.gen(function* () {
      const outlet = yield* ObservationOutlet.make(1)
      yield* outlet.handOff(goneOf("a"))
      const late = yield* Effect.forkChild(outlet.handOff(goneOf("b"), { deadlineMillis: 500 }))
      yield* TestClock.adjust("499 millis")
      assert.isUndefined(late.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* Fiber.join(late), "timed-out")
      assert.strictEqual(yield* Queue.size(outlet.observations), 1)
    }),
  )

  it.effect("drops an observation that is no longer current, queueing nothing", () =>
    Effect.gen(function* () {
      const outlet = yield* ObservationOutlet.make(1)
      assert.strictEqual(yield* outlet.handOff(goneOf("stale"), { stillCurrent: () => false }), "stale")
      assert.strictEqual(yield* Queue.size(outlet.observations), 0)
    }),
  )

  it.effect("a producer that passed its check is not overtaken by one that came later", () =>
    Effect.gen(function* () {
      const outlet = yield* ObservationOutlet.make(1)
      yield* outlet.handOff(goneOf("first"))
      const checked: Array<string> = []
      const reading = yield* Effect.forkChild(
        outlet.handOff(goneOf("reading"), {
          stillCurrent: () => {
            checked.push("reading")
            return true
          },
        }),
      )
      yield* Effect.yieldNow
      const deletion = yield* Effect.forkChild(outlet.handOff(goneOf("deletion")))
      yield* Effect.yieldNow
      assert.deepStrictEqual(checked, ["reading"])
      const order: Array<string> = []
      for (let taken = 0; taken < 3; taken++) {
        order.push(nodeOf(yield* Queue.take(outlet.observations)))
      }
      yield* Fiber.join(reading)
      yield* Fiber.join(deletion)
      assert.deepStrictEqual(order, ["first", "reading", "deletion"])
    }),
  )

  it.effect("once room frees, a new hand-off still queues behind those that waited for it", () =>
    Effect.gen(function* () {
      const outlet = yield* ObservationOutlet.make(1)
      yield* outlet.handOff(goneOf("first"))
      const waiting = []
      for (const name of ["second", "third"]) {
        waiting.push(yield* Effect.forkChild(outlet.handOff(goneOf(name), { deadlineMillis: 60_000 })))
        yield* Effect.yieldNow
      }
      const order = [nodeOf(yield* Queue.take(outlet.observations)), nodeOf(yield* Queue.take(outlet.observations))]
      const later = yield* Effect.forkChild(outlet.handOff(goneOf("later"), { stillCurrent: () => true }))
      for (let taken = 0; taken < 2; taken++) {
        order.push(nodeOf(yield* Queue.take(outlet.observations)))
      }
      for (const fiber of [...waiting, later]) assert.strictEqual(yield* Fiber.join(fiber), "handed")
      assert.deepStrictEqual(order, ["first", "second", "third", "later"])
    }),
  )

  it.effect("hands over at once while there is room, stale ones dropped, in the order they came", () =>
    Effect.gen(function* () {
      const outlet = yield* ObservationOutlet.make(3)
      assert.strictEqual(yield* outlet.handOff(goneOf("a"), { deadlineMillis: 0 }), "handed")
      assert.strictEqual(yield* outlet.handOff(goneOf("b"), { stillCurrent: () => false }), "stale")
      assert.strictEqual(yield* outlet.handOff(goneOf("c"), { deadlineMillis: 0, stillCurrent: () => true }), "handed")
      assert.deepStrictEqual(
        [yield* Queue.take(outlet.observations), yield* Queue.take(outlet.observations)].map(nodeOf),
        ["a", "c"],
      )
    }),
  )
})
