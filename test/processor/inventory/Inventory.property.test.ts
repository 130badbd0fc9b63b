import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Gpu } from "../../../src/domain/Gpu.ts"
import type { NodeRef } from "../../../src/domain/NodeObservation.ts"
import type { GpuFailure } from "../../../src/domain/NodeReading.ts"
import { empty, type Inventory, tick, transition } from "../../../src/processor/inventory/Inventory.ts"
import { at, failed, gone, h100, minute, read, type Step, settings, tickAt } from "./Observations.ts"

const nodes: ReadonlyArray<NodeRef> = [
  { name: "gpu-node-a", uid: "uid-a", providerId: "aws:///eu-west-1a/i-0aaa" },
  { name: "gpu-node-b", uid: "uid-b", providerId: "gce://proj/europe-west4-a/gpu-node-b" },
  { name: "gpu-node-c" },
  {
    name: "gpu-node-d",
    providerId:
      "azure:///subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/virtualMachineScaleSets/gpu/virtualMachines/3",
  },
]

/** A pool of GPUs that readings draw from: the same GPU may turn up on any node. */
const pool: ReadonlyArray<Gpu> = Array.from({ length: 10 }, (_, n) => ({
  ...h100("pool", n % 8),
  uuid: `GPU-pool-${n}`,
}))

const nodeArb = fc.constantFrom(...nodes)

/** Time moves forward by up to 20 minutes, and sometimes back a little (late news). */
const deltaArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 20 * minute }) },
  { weight: 1, arbitrary: fc.integer({ min: -2 * minute, max: 0 }) },
)

const failureArb: fc.Arbitrary<GpuFailure> = fc.oneof(
  fc
    .constantFrom(...pool)
    .map((gpu) => ({ kind: "device-handle" as const, pciBusId: gpu.pciBusId ?? "", reason: "Unknown Error" })),
  fc
    .integer({ min: 0, max: 7 })
    .map((index) => ({ kind: "requires-reset" as const, index, reason: "GPU requires reset" })),
  fc.constant({ kind: "unidentified" as const, reason: "no UUID" }),
)

type Move =
  | {
      readonly kind: "read"
      readonly node: NodeRef
      readonly gpus: ReadonlyArray<number>
      readonly failures: ReadonlyArray<GpuFailure>
    }
  | { readonly kind: "failed"; readonly node: NodeRef }
  | { readonly kind: "gone"; readonly node: NodeRef; readonly reason: "pod-deleted" | "node-deleted" }
  | { readonly kind: "tick" }

const moveArb: fc.Arbitrary<Move> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("read" as const),
      node: nodeArb,
      gpus: fc.uniqueArray(fc.integer({ min: 0, max: pool.length - 1 }), { maxLength: 6 }),
      failures: fc.oneof(
        { weight: 4, arbitrary: fc.constant([]) },
        { weight: 1, arbitrary: fc.array(failureArb, { maxLength: 2 }) },
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("failed" as const), node: nodeArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("gone" as const),
      node: nodeArb,
      reason: fc.constantFrom("pod-deleted" as const, "node-deleted" as const),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: "tick" as const }) },
)

const scenarioArb = fc.array(fc.tuple(deltaArb, moveArb), { minLength: 1, maxLength: 60 })

const stepOf = (move: Move, time: Date): Step => {
  if (move.kind === "read") {
    return read(
      move.node,
      time,
      move.gpus.flatMap((n) => pool[n] ?? []),
      { failures: move.failures },
    )
  }
  if (move.kind === "failed") return failed(move.node, time)
  if (move.kind === "gone") return gone(move.node, time, move.reason)
  return tickAt(time)
}

const stepsOf = (scenario: ReadonlyArray<readonly [number, Move]>): ReadonlyArray<Step> => {
  let clock = 0
  return scenario.map(([delta, move]) => {
    clock += delta
    return stepOf(move, at(clock))
  })
}

/** Every located GPU is on exactly the node its location names, and no node holds a GPU located elsewhere. */
const locationsAgree = (state: Inventory): void => {
  let onNodes = 0
  for (const entry of state.nodes.values()) {
    expect(entry.gpus.size).toBeGreaterThan(0)
    for (const [uuid, known] of entry.gpus) {
      onNodes++
      expect(known.node).toBe(entry.name)
      expect(state.locations.get(uuid)).toBe(entry.name)
    }
    for (const uuid of entry.missing.keys()) expect(entry.gpus.has(uuid)).toBe(true)
  }
  expect(state.locations.size).toBe(onNodes)
}

const quickSettings = [
  settings,
  { ...settings, reportIntervalMs: 30 * minute, removalGraceMs: 0 },
  { ...settings, reportIntervalMs: 0 },
]

describe("Inventory over random observations", () => {
  it("keeps one location per GPU, counts added minus removed as known, and never moves a GPU to where it was", () => {
    fc.assert(
      fc.property(scenarioArb, fc.constantFrom(...quickSettings), (scenario, chosen) => {
        let state = empty
        let balance = 0
        for (const step of stepsOf(scenario)) {
          const before = state
          const next = step._tag === "Tick" ? tick(state, step.now, chosen) : transition(state, step, chosen)
          state = next.state
          const uuids = next.events.map((event) => event.record.uuid)
          expect(new Set(uuids).size).toBe(uuids.length)
          for (const event of next.events) {
            const { record } = event
            const wasKnown = before.locations.has(record.uuid)
            switch (record.event) {
              case "added":
                expect(wasKnown).toBe(false)
                balance++
                break
              case "removed":
                expect(wasKnown).toBe(true)
                expect(state.locations.has(record.uuid)).toBe(false)
                balance--
                break
              case "moved":
                expect(wasKnown).toBe(true)
                expect(record.previousNode === record.node && record.previousMachine === record.machine).toBe(false)
                expect(record.previousNode).not.toBe(record.node)
                break
              case "observed":
                expect(wasKnown).toBe(true)
                break
            }
          }
          if (step._tag === "NodeReadFailed") expect(next.events).toEqual([])
          locationsAgree(state)
          expect(balance).toBe(state.locations.size)
        }
      }),
      { numRuns: 300 },
    )
  })
})
