import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ReadinessChecks } from "../../src/health/ReadinessChecks.ts"
import { type HeapGrowth, relaxedUntilReady, startedHeapGrowingPercent } from "../../src/service/StartupHeapGrowth.ts"

/** A heap growth that records what it was set to. */
const recordedGrowth = () => {
  const set: Array<number> = []
  const growth: HeapGrowth = { set: (percent) => set.push(percent) }
  return { growth, set }
}

const eventually = (what: string, condition: () => boolean) =>
  Effect.gen(function* () {
    for (let tries = 0; tries < 200; tries++) {
      if (condition()) return
      yield* Effect.sleep("10 millis")
    }
    assert.fail(`${what} did not happen within 2 s`)
  })

describe("StartupHeapGrowth", () => {
  it("finds the heap growing option the process was started with, the last one given", () => {
    assert.strictEqual(startedHeapGrowingPercent(["--max-semi-space-size=16", "--heap-growing-percent=35"]), 35)
    assert.strictEqual(startedHeapGrowingPercent(["--heap_growing_percent=50"]), 50)
    assert.strictEqual(startedHeapGrowingPercent(["--heap-growing-percent=35", "--heap-growing-percent=20"]), 20)
    assert.isUndefined(startedHeapGrowingPercent(["--heap-growing-percent=35", "--heap-growing-percent=0"]))
    assert.isUndefined(startedHeapGrowingPercent(["--max-semi-space-size=16", "--inspect=127.0.0.1:0"]))
    assert.isUndefined(startedHeapGrowingPercent([]))
  })

  it.live("lets V8 choose until the service is first ready, then restores the option", () =>
    Effect.gen(function* () {
      const { growth, set } = recordedGrowth()
      const checks = yield* ReadinessChecks
      let synced = false
      yield* checks.register(
        "informers",
        Effect.sync(() => ({ healthy: synced })),
      )
      yield* relaxedUntilReady(growth, { startedWith: 35, pollInterval: "10 millis", atMost: "1 minute" })
      assert.deepStrictEqual(set, [0])
      yield* Effect.sleep("50 millis")
      assert.deepStrictEqual(set, [0])
      synced = true
      yield* eventually("the option restored", () => set.length === 2)
      assert.deepStrictEqual(set, [0, 35])
    }).pipe(Effect.scoped, Effect.provide(ReadinessChecks.layer())),
  )

  it.live("restores the option after atMost when the service never becomes ready, and when its scope closes", () =>
    Effect.gen(function* () {
      const { growth, set } = recordedGrowth()
      const checks = yield* ReadinessChecks
      yield* checks.register("informers", Effect.succeed({ healthy: false }))
      yield* relaxedUntilReady(growth, { startedWith: 35, pollInterval: "10 millis", atMost: "50 millis" })
      yield* eventually("the option restored", () => set.length === 2)
      assert.deepStrictEqual(set, [0, 35])

      const closed = recordedGrowth()
      yield* Effect.scoped(
        relaxedUntilReady(closed.growth, { startedWith: 20, pollInterval: "10 millis", atMost: "1 minute" }),
      )
      assert.deepStrictEqual(closed.set, [0, 20])
    }).pipe(Effect.scoped, Effect.provide(ReadinessChecks.layer())),
  )

  it.live("changes nothing for a process started without the option", () =>
    Effect.gen(function* () {
      const { growth, set } = recordedGrowth()
      yield* relaxedUntilReady(growth, { startedWith: undefined, pollInterval: "10 millis", atMost: "1 minute" })
      yield* Effect.sleep("30 millis")
      assert.deepStrictEqual(set, [])
    }).pipe(Effect.scoped, Effect.provide(ReadinessChecks.layer())),
  )
})
