import type { Fleet } from "../catalog/Fleet.ts"
import { type GpuCondition, healthyCondition, maxLinkWidth } from "../catalog/GpuCondition.ts"
import type { SeededRandom } from "../catalog/SeededRandom.ts"
import type { GpuIdentity, SimulatedHost } from "../catalog/SimulatedHost.ts"
import { trueHealthState } from "../ledger/TrueHealth.ts"
import { reportsRemappedRows, reportsRetiredPages } from "../nvidia-smi/HealthFields.ts"

export interface HealthFaultsOptions {
  readonly fleet: Fleet
  readonly random: SeededRandom
  /** Sets a board's condition the way the cluster records it (the ledger notes a change of its health). */
  readonly setCondition: (host: SimulatedHost, identity: GpuIdentity, condition: GpuCondition) => void
}

/** One step of a fault's course: the board's next condition, from the one it has. */
type Step = (condition: GpuCondition) => GpuCondition

/** A reset, reseat or field repair: the board reads healthy again; its lifetime counters stay. */
const repaired: Step = (condition) => ({
  ...healthyCondition,
  remappedUncorrectable: condition.remappedUncorrectable,
  retiredDoubleBit: condition.retiredDoubleBit,
  aggregateUncorrectable: condition.aggregateUncorrectable,
})

/** A fault in progress on one board: the steps still to come, and when the next is due. */
interface Course {
  readonly identity: GpuIdentity
  readonly steps: Array<Step>
  dueAt: number
}

/**
 * GPU boards failing as a fault of the cluster, along the courses real boards take, each only where the
 * board's generation reports it: an uncorrectable memory error whose row remap waits for a reset and
 * may fail (Ampere and later); one whose page retirement waits for a reset (Turing); volatile
 * uncorrectable ECC errors; the PCIe link trained at x8; the NVLink fabric down (NVL trays); a recovery
 * action (a reset, or a drain and reset, or a reboot on drivers that say so). Every course ends with a
 * reset or repair that makes the board read healthy. Each step lasts at least `stageSeconds`, so every
 * state a board goes through lasts long enough for a service reading at its resync to see it.
 */
export class HealthFaults {
  private readonly options: HealthFaultsOptions
  /** By UUID: the boards with a fault in progress. */
  private readonly courses = new Map<string, Course>()

  constructor(options: HealthFaultsOptions) {
    this.options = options
  }

  /** How many boards have a fault in progress (or were repaired less than a stage ago). */
  get count(): number {
    return this.courses.size
  }

  /** One second: starts faults on healthy boards at `perGpuMinute` (a share of them per minute) and takes due steps. */
  tick(perGpuMinute: number, stageSeconds: number, nowMs: number): void {
    const { fleet, random } = this.options
    if (this.courses.size > 0) {
      const hostOf = this.hostsByUuid()
      for (const [uuid, course] of this.courses) {
        if (course.dueAt > nowMs) continue
        const host = hostOf.get(uuid)
        const step = course.steps.shift()
        // A course ends a stage after its last step, so a repaired board reads healthy that long before the next.
        if (host === undefined || step === undefined) {
          this.courses.delete(uuid)
          continue
        }
        this.options.setCondition(host, course.identity, step(course.identity.condition))
        course.dueAt = nowMs + this.stageMs(stageSeconds)
      }
    }
    if (perGpuMinute <= 0) return
    const candidates: Array<{ readonly host: SimulatedHost; readonly identity: GpuIdentity }> = []
    for (const host of fleet.hosts.values())
      for (const gpu of host.gpus)
        if (!this.courses.has(gpu.identity.uuid) && trueHealthState(gpu.identity.condition) === "ok")
          candidates.push({ host, identity: gpu.identity })
    const count = Math.min(candidates.length, random.poisson((perGpuMinute * candidates.length) / 60))
    for (const { host, identity } of random.shuffle(candidates).slice(0, count)) {
      const steps = this.courseFor(host, identity)
      const first = steps.shift()
      if (first === undefined) continue
      this.options.setCondition(host, identity, first(identity.condition))
      this.courses.set(identity.uuid, { identity, steps, dueAt: nowMs + this.stageMs(stageSeconds) })
    }
  }

  /** Ends every fault in progress: each board is reset or repaired now. */
  repairAll(): void {
    const hostOf = this.hostsByUuid()
    for (const [uuid, course] of this.courses) {
      const host = hostOf.get(uuid)
      if (host !== undefined && course.steps.length > 0)
        this.options.setCondition(host, course.identity, repaired(course.identity.condition))
    }
    this.courses.clear()
  }

  private stageMs(stageSeconds: number): number {
    return Math.round(stageSeconds * 1000 * (1 + this.options.random.next() / 2))
  }

  private hostsByUuid(): Map<string, SimulatedHost> {
    const hosts = new Map<string, SimulatedHost>()
    for (const host of this.options.fleet.hosts.values())
      for (const gpu of host.gpus) hosts.set(gpu.identity.uuid, host)
    return hosts
  }

  /** The course of a new fault, drawn among those the board's generation reports. */
  private courseFor(host: SimulatedHost, identity: GpuIdentity): Array<Step> {
    const { random } = this.options
    const model = host.model
    const migEnabled = identity.migProfiles.length > 0
    const courses: Array<Array<Step>> = [[(condition) => ({ ...condition, linkWidth: maxLinkWidth / 2 }), repaired]]
    const resetAction: Step = (condition) => ({ ...condition, recoveryAction: "reset" })
    courses.push([resetAction, repaired])
    if (model.ecc) {
      const errors = random.int(1, 3)
      courses.push([
        (condition) => ({
          ...condition,
          volatileUncorrectable: condition.volatileUncorrectable + errors,
          aggregateUncorrectable: condition.aggregateUncorrectable + errors,
        }),
        repaired,
      ])
      courses.push([(condition) => ({ ...condition, recoveryAction: "drain-and-reset" }), repaired])
    }
    if (model.ecc && reportsRemappedRows(model, migEnabled) !== undefined) {
      const pending: Step = (condition) => ({
        ...condition,
        remapPending: true,
        remappedUncorrectable: condition.remappedUncorrectable + 1,
        volatileUncorrectable: condition.volatileUncorrectable + 1,
        aggregateUncorrectable: condition.aggregateUncorrectable + 1,
      })
      const failure: Step = (condition) => ({ ...condition, remapPending: false, remapFailure: true })
      courses.push(random.chance(0.5) ? [pending, failure, repaired] : [pending, repaired])
    }
    if (reportsRetiredPages(model))
      courses.push([
        (condition) => ({
          ...condition,
          retirementPending: true,
          retiredDoubleBit: condition.retiredDoubleBit + 1,
          volatileUncorrectable: condition.volatileUncorrectable + 1,
          aggregateUncorrectable: condition.aggregateUncorrectable + 1,
        }),
        repaired,
      ])
    if (host.rack !== undefined) courses.push([(condition) => ({ ...condition, fabricDown: true }), repaired])
    // Only drivers that have `gpu_recovery_action` (570+) can say reboot; every GB200 driver has it.
    if (model.driverBranches.every((branch) => branch >= 570))
      courses.push([(condition) => ({ ...condition, recoveryAction: "reboot" }), repaired])
    return [...random.pick(courses)]
  }
}
