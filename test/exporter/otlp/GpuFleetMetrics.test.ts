import { assert, describe, it } from "@effect/vitest"
import { emptyResource } from "@opentelemetry/resources"
import { Duration, Effect } from "effect"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import * as GpuFleetMetrics from "../../../src/exporter/otlp/GpuFleetMetrics.ts"
import { addedEvent, addedEvents } from "../InventoryEvents.ts"

/** The (node → GPU count) pairs of `gpu_serials_gpus` in one collection. */
const countsByNode = (fleet: GpuFleetMetrics.GpuFleetMetrics) =>
  Effect.promise(async () => {
    const { resourceMetrics } = await fleet.producer.collect()
    const metric = resourceMetrics.scopeMetrics[0]?.metrics.find(
      (candidate) => candidate.descriptor.name === GpuFleetMetrics.gpusByNodeMetric,
    )
    return new Map((metric?.dataPoints ?? []).map((point) => [String(point.attributes.node), Number(point.value)]))
  })

const removed = (event: InventoryEvent): InventoryEvent => ({ ...event, record: { ...event.record, event: "removed" } })

describe("gpu_serials_gpus", () => {
  it.effect("reports every node of a large fleet, and a node no more once its GPUs are gone", () =>
    Effect.gen(function* () {
      const fleet = yield* GpuFleetMetrics.make({
        resource: emptyResource(),
        readers: () => [],
        shutdownTimeout: Duration.seconds(1),
      })
      // 5,000 nodes: more than the 2,000 series an SDK instrument keeps before it folds them into one.
      yield* fleet.record(addedEvents(5_000))
      const before = yield* countsByNode(fleet)
      assert.strictEqual(before.size, 5_000)
      assert.strictEqual(before.get("gpu-node-42"), 1)
      yield* fleet.record([removed(addedEvent(42))])
      const after = yield* countsByNode(fleet)
      assert.strictEqual(after.size, 4_999)
      assert.isFalse(after.has("gpu-node-42"))
    }).pipe(Effect.scoped),
  )
})
