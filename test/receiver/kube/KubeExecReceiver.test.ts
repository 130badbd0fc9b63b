import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { eventually, execsRanNvidiaSmiDirectly, gone, reads, startHarness } from "./ReceiverHarness.ts"

describe("kube_exec receiver against the simulated cluster", () => {
  it.live("reads every ready pod once, with its node's GPUs", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness()
      const nodes = harness.cluster.nodeNames()
      yield* harness.receiver.ready
      yield* eventually("a reading of every node", () => reads(harness).length >= nodes.length)
      yield* Effect.sleep("300 millis")
      const readings = reads(harness)
      assert.strictEqual(readings.length, nodes.length)
      assert.deepStrictEqual(new Set(readings.map((read) => read.node.name)), new Set(nodes))
      for (const read of readings) {
        const simulated = harness.cluster.node(read.node.name)
        assert.isDefined(simulated)
        assert.strictEqual(read.reading.gpus.length, simulated?.gpus.length)
        assert.strictEqual(read.pod.name, simulated?.pod)
        assert.isDefined(read.node.uid)
      }
      assert.isTrue(execsRanNvidiaSmiDirectly(harness))
      assert.deepStrictEqual(yield* harness.receiver.health, { healthy: true })
      assert.isTrue(yield* harness.receiver.isReady)
      assert.strictEqual(harness.metrics.readings.filter((reading) => reading.result === "ok").length, nodes.length)
      assert.strictEqual(gone(harness).length, 0)
    }),
  )
})
