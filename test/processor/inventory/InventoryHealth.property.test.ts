import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { GpuHealthSignals } from "../../../src/domain/GpuHealth.ts"
import { defaultHealthThresholds, healthVerdict } from "../../../src/domain/HealthVerdict.ts"
import { at, h100, minute, nodeA, nodeB, read, run } from "./Observations.ts"

/** Conditions a GPU may report from one reading to the next, counters varying within each. */
const conditionArb: fc.Arbitrary<GpuHealthSignals | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.nat({ max: 3 }).map((correctable) => ({
    remappedRows: { correctable, uncorrectable: 0, pending: false, failure: false },
    ecc: { enabled: true, volatileUncorrectable: 0, volatileCorrectable: correctable * 7 },
  })),
  fc.nat({ max: 3 }).map((uncorrectable) => ({
    remappedRows: { correctable: 0, uncorrectable, pending: true, failure: false },
  })),
  fc.boolean().map((pending) => ({ remappedRows: { uncorrectable: 9, pending, failure: true } })),
  fc.integer({ min: 1, max: 4 }).map((volatileUncorrectable) => ({ ecc: { enabled: true, volatileUncorrectable } })),
  fc.constantFrom(4, 8, 16).map((current) => ({ pcie: { linkWidth: { current, max: 16 }, replays: current } })),
  fc.constantFrom("none", "reset", "reboot").map((recoveryAction) => ({ recoveryAction })),
)

const gpus = [0, 1, 2].map((index) => h100("p", index))

/** A reading: the node it is on (GPUs move between two), and each GPU's condition. */
const readingArb = fc.tuple(fc.boolean(), fc.array(conditionArb, { minLength: 3, maxLength: 3 }))

const verdictOf = (signals: GpuHealthSignals) => {
  const { state, reasons } = healthVerdict(signals, { thresholds: defaultHealthThresholds })
  return { state, reasons: [...reasons] }
}

describe("Inventory health over random readings", () => {
  it("reports a health event exactly when a GPU's known state or reasons change, with the state before, wherever it is", () => {
    fc.assert(
      fc.property(fc.array(readingArb, { minLength: 1, maxLength: 25 }), (readings) => {
        const steps = readings.map(([onB, conditions], step) =>
          read(
            onB ? nodeB : nodeA,
            at(step * minute),
            gpus.map((gpu, index) => {
              const signals = conditions[index]
              return signals === undefined ? gpu : { ...gpu, health: signals }
            }),
          ),
        )
        const { events } = run(steps)

        const expected: Array<unknown> = []
        const last = new Map<string, ReturnType<typeof verdictOf>>()
        readings.forEach(([onB, conditions], step) => {
          gpus.forEach((gpu, index) => {
            const signals = conditions[index]
            const before = last.get(gpu.uuid)
            if (signals === undefined) {
              last.delete(gpu.uuid)
              return
            }
            const now = verdictOf(signals)
            if (before !== undefined && (before.state !== now.state || before.reasons.join() !== now.reasons.join()))
              expected.push([step, onB ? nodeB.name : nodeA.name, gpu.uuid, before.state, now.state, now.reasons])
            last.set(gpu.uuid, now)
          })
        })

        const reported = events
          .filter((event) => event.record.event === "health")
          .map(({ record }) => [
            (Date.parse(record.time) - at(0).getTime()) / minute,
            record.node,
            record.uuid,
            record.previousHealthState,
            record.health?.state,
            record.health?.reasons,
          ])
        expect(reported).toEqual(expected)
        // Every record of a GPU that reported its condition carries the verdict of that reading.
        for (const event of events) {
          if (event.record.event === "removed" || event.record.health === undefined) continue
          expect(event.record.health.reasons.length === 0).toBe(event.record.health.state === "ok")
        }
      }),
      { numRuns: 300 },
    )
  })
})
