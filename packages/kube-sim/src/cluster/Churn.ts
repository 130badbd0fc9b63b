import type { SeededRandom } from "../catalog/SeededRandom.ts"

/** How often the cluster changes under the service, in events per minute across the whole cluster. */
export interface ChurnRates {
  /** Device-plugin pods deleted and replaced (new name and uid, Pending → Running → Ready). */
  readonly podRestartsPerMinute: number
  readonly nodeJoinsPerMinute: number
  readonly nodeLeavesPerMinute: number
  /** GPU boards moved between two hosts of the same model; both pods restart, as after maintenance. */
  readonly gpuSwapsPerMinute: number
  /** Device-plugin pods that turn not ready for a moment (failing readiness probe). */
  readonly readinessFlapsPerMinute: number
  /**
   * Healthy GPU boards this cluster swaps with a host of the same model in another cluster of its board
   * exchange (`BoardExchange`), which makes these swaps; nothing without one. Default 0.
   */
  readonly crossClusterSwapsPerMinute?: number
}

export const noChurn: ChurnRates = {
  podRestartsPerMinute: 0,
  nodeJoinsPerMinute: 0,
  nodeLeavesPerMinute: 0,
  gpuSwapsPerMinute: 0,
  readinessFlapsPerMinute: 0,
  crossClusterSwapsPerMinute: 0,
}

/** The cluster changes churn can make; each picks its own target. */
export interface ChurnOperations {
  restartRandomPod(): void
  addRandomNode(): void
  removeRandomNode(): void
  swapRandomGpus(): void
  flapRandomReadiness(): void
}

const tickMs = 250

/** Drives random cluster changes at the configured rates (a Poisson process per kind of change). */
export class Churn {
  private rates: ChurnRates
  private readonly operations: ChurnOperations
  private readonly random: SeededRandom
  private timer: NodeJS.Timeout | undefined

  constructor(rates: Partial<ChurnRates>, operations: ChurnOperations, random: SeededRandom) {
    this.rates = { ...noChurn, ...rates }
    this.operations = operations
    this.random = random
    this.reschedule()
  }

  get currentRates(): ChurnRates {
    return this.rates
  }

  setRates(rates: Partial<ChurnRates>): void {
    this.rates = { ...this.rates, ...rates }
    this.reschedule()
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
  }

  private reschedule(): void {
    // Swaps between clusters are drawn by their exchange, on its own timer.
    const { crossClusterSwapsPerMinute: _drawnByTheExchange, ...own } = this.rates
    const active = Object.values(own).some((rate) => rate > 0)
    if (active && this.timer === undefined) this.timer = setInterval(() => this.tick(), tickMs)
    if (!active) this.stop()
  }

  private tick(): void {
    const fire = (perMinute: number, action: () => void) => {
      const count = this.random.poisson((perMinute * tickMs) / 60_000)
      for (let index = 0; index < count; index++) action()
    }
    fire(this.rates.podRestartsPerMinute, () => this.operations.restartRandomPod())
    fire(this.rates.nodeJoinsPerMinute, () => this.operations.addRandomNode())
    fire(this.rates.nodeLeavesPerMinute, () => this.operations.removeRandomNode())
    fire(this.rates.gpuSwapsPerMinute, () => this.operations.swapRandomGpus())
    fire(this.rates.readinessFlapsPerMinute, () => this.operations.flapRandomReadiness())
  }
}
