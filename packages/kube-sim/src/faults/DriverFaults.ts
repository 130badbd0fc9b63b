import type { Fleet } from "../catalog/Fleet.ts"
import type { SeededRandom } from "../catalog/SeededRandom.ts"
import { type DriverFailure, driverFailures, type SimulatedHost } from "../catalog/SimulatedHost.ts"

export interface DriverFaultsOptions {
  readonly fleet: Fleet
  readonly random: SeededRandom
  /** Breaks or repairs a host's driver the way the cluster records it. */
  readonly setFailure: (host: SimulatedHost, failure: DriverFailure | undefined) => void
}

/**
 * Drivers failing as a fault of the cluster: each `tick` (one second) breaks the drivers of healthy hosts
 * at the given rate, each with one of the real failures (driver not loaded, NVML mismatch, no devices, a
 * lost device handle), and repairs each once its time is up. `repairAll` ends every failure it caused.
 */
export class DriverFaults {
  private readonly options: DriverFaultsOptions
  /** The hosts this broke, by node name, with when each is repaired. */
  private readonly broken = new Map<string, { readonly host: SimulatedHost; readonly repairAt: number }>()

  constructor(options: DriverFaultsOptions) {
    this.options = options
  }

  /** How many drivers are broken by this now. */
  get count(): number {
    return this.broken.size
  }

  tick(failuresPerMinute: number, failureSeconds: number, nowMs: number): void {
    const { fleet, random, setFailure } = this.options
    for (const [node, { host, repairAt }] of this.broken) {
      if (repairAt > nowMs) continue
      this.broken.delete(node)
      if (fleet.host(node) === host) setFailure(host, undefined)
    }
    const count = random.poisson(failuresPerMinute / 60)
    if (count === 0) return
    const healthy = [...fleet.hosts.values()].filter((host) => host.failure === undefined && host.gpus.length > 0)
    for (const host of random.shuffle(healthy).slice(0, count)) {
      this.broken.set(host.machine.nodeName, { host, repairAt: nowMs + failureSeconds * 1000 })
      setFailure(host, random.pick(driverFailures))
    }
  }

  repairAll(): void {
    for (const [node, { host }] of this.broken)
      if (this.options.fleet.host(node) === host) this.options.setFailure(host, undefined)
    this.broken.clear()
  }
}
