import { describe, expect, it } from "vitest"
import { Fleet } from "../../src/catalog/Fleet.ts"
import { type GpuCondition, healthyCondition } from "../../src/catalog/GpuCondition.ts"
import { SeededRandom } from "../../src/catalog/SeededRandom.ts"
import type { SimulatedHost } from "../../src/catalog/SimulatedHost.ts"
import { HealthFaults } from "../../src/faults/HealthFaults.ts"
import { type TrueHealthState, trueHealthState } from "../../src/ledger/TrueHealth.ts"

interface Change {
  readonly second: number
  readonly uuid: string
  readonly host: SimulatedHost
  readonly from: TrueHealthState
  readonly to: TrueHealthState
  readonly condition: GpuCondition
}

/** A fleet of every model under health faults for `seconds`, then repaired: every condition change, by second. */
const faultedFleet = (seed: string, seconds: number): ReadonlyArray<Change> => {
  const fleet = Fleet.generate({
    nodes: 24,
    modelMix: { "h100-hgx": 1, "gb200-nvl72": 1, "a100-mig": 1, t4: 1, l40s: 1, rtx4090: 1 },
    seed,
    clusterName: "c",
  })
  const changes: Array<Change> = []
  let second = 0
  const faults = new HealthFaults({
    fleet,
    random: new SeededRandom(seed).fork("health-faults"),
    setCondition: (host, identity, condition) => {
      const from = trueHealthState(identity.condition)
      identity.condition = condition
      changes.push({ second, uuid: identity.uuid, host, from, to: trueHealthState(condition), condition })
    },
  })
  for (; second < seconds; second++) faults.tick(0.5, 5, second * 1000)
  faults.repairAll()
  for (const host of fleet.hosts.values())
    for (const gpu of host.gpus) expect(trueHealthState(gpu.identity.condition)).toBe("ok")
  return changes
}

describe("health faults", () => {
  const changes = faultedFleet("health-faults", 120)

  it("turn GPUs degraded and failed, and every one back to ok when repaired", () => {
    const states = new Set(changes.map((change) => change.to))
    expect(states).toEqual(new Set(["ok", "degraded", "failed"]))
    expect(changes.filter((change) => change.from === "ok").length).toBeGreaterThan(20)
  })

  it("draw the same courses at the same times from the same seed", () => {
    const again = faultedFleet("health-faults", 120)
    const summary = (list: ReadonlyArray<Change>) => list.map(({ second, uuid, from, to }) => [second, uuid, from, to])
    expect(summary(again)).toEqual(summary(changes))
    expect(summary(faultedFleet("another-seed", 120))).not.toEqual(summary(changes))
  })

  it("give each board only faults its generation reports", () => {
    for (const { host, condition } of changes) {
      const where = `${host.model.name} on ${host.driver.version}`
      if (!host.model.ecc) {
        expect(condition.volatileUncorrectable, where).toBe(0)
        expect(condition.recoveryAction, where).not.toBe("drain-and-reset")
      }
      if (host.model.architecture !== "Turing") expect(condition.retirementPending, where).toBe(false)
      if (host.model.architecture === "Turing" || !host.model.ecc) expect(condition.remapPending, where).toBe(false)
      if (host.rack === undefined) expect(condition.fabricDown, where).toBe(false)
      if (host.model.name !== "gb200-nvl72") expect(condition.recoveryAction, where).not.toBe("reboot")
    }
  })

  it("hold each state at least a stage, and end each course healthy but for the lifetime counters", () => {
    const byGpu = new Map<string, Array<Change>>()
    for (const change of changes) byGpu.set(change.uuid, [...(byGpu.get(change.uuid) ?? []), change])
    for (const course of byGpu.values()) {
      for (let index = 1; index < course.length; index++) {
        const step = course[index]
        const before = course[index - 1]
        if (step === undefined || before === undefined || step.second === 120) continue
        expect(step.second - before.second).toBeGreaterThanOrEqual(5)
      }
      const last = course.at(-1)?.condition
      expect({ ...last, remappedUncorrectable: 0, retiredDoubleBit: 0, aggregateUncorrectable: 0 }).toEqual(
        healthyCondition,
      )
    }
  })
})
