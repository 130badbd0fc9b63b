import { describe, expect, it } from "vitest"
import type { GpuHealth } from "../../../src/domain/GpuHealth.ts"
import { SharedVerdicts } from "../../../src/processor/inventory/SharedVerdicts.ts"

/** A verdict as a reading brings it: every object its own. */
const verdict = (correctable: number): GpuHealth => ({
  ecc: { enabled: true, volatileCorrectable: correctable },
  pcie: { linkGen: { current: 5, max: 5 }, linkWidth: { current: 16, max: 16 }, replays: 0 },
  clockEvents: ["hw-slowdown"],
  state: "ok",
  reasons: [],
  rmaEligible: false,
})

describe("SharedVerdicts", () => {
  it("answers an equal verdict with the one it kept, frozen, equal to what was given", () => {
    const shared = new SharedVerdicts(64)
    const first = shared.verdict(verdict(0))
    const again = shared.verdict(verdict(0))
    expect(again).toBe(first)
    expect(first).toEqual(verdict(0))
    expect(Object.isFrozen(first)).toBe(true)
    expect(Object.isFrozen(first.pcie?.linkGen)).toBe(true)
    expect(Object.isFrozen(first.clockEvents)).toBe(true)
  })

  it("shares the equal details of verdicts that differ", () => {
    const shared = new SharedVerdicts(64)
    const one = shared.verdict(verdict(1))
    const two = shared.verdict(verdict(2))
    expect(two).not.toBe(one)
    expect(two.ecc).not.toBe(one.ecc)
    expect(two.pcie).toBe(one.pcie)
    expect(two.clockEvents).toBe(one.clockEvents)
    expect(two.reasons).toBe(one.reasons)
  })

  it("keeps no more values than its bound, however many distinct verdicts it is given", () => {
    const shared = new SharedVerdicts(32)
    for (let correctable = 0; correctable < 1_000; correctable++) {
      expect(shared.verdict(verdict(correctable)).ecc?.volatileCorrectable).toBe(correctable)
      expect(shared.size).toBeLessThanOrEqual(32)
    }
    // Starting anew, it keeps the common values again at their next use.
    expect(shared.verdict(verdict(5)).pcie).toBe(shared.verdict(verdict(6)).pcie)
  })
})
