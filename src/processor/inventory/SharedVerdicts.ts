import type { GpuHealth } from "../../domain/GpuHealth.ts"

/**
 * The health verdicts many GPUs repeat, kept once: a verdict equal to one kept before is that one, and so
 * is each of its details (`ecc`, `pcie` and its link figures, `remappedRows`, `fabric`, the reasons, ...),
 * so a GPU whose ECC counters changed still shares its PCIe link and its fabric with the GPUs that report
 * the same. Each reading brings its own copy of every value; without this, a GPU whose verdict changed
 * kept its own copies for good, and as a fleet's GPUs changed one by one, each came to hold its own.
 * Equal means equal as JSON (same fields in the same order), which is how a parser builds them. Kept values
 * are frozen. Small and bounded: past `bound` values it starts anew, so the values a fleet no longer reports
 * are let go; what was shared before stays shared, and the common values are kept again at their next use.
 */
export class SharedVerdicts {
  private readonly kept = new Map<string, unknown>()
  private readonly bound: number

  constructor(bound: number) {
    this.bound = bound
  }

  /** The one verdict equal to `verdict`, its details the ones equal to its own. */
  verdict(verdict: GpuHealth): GpuHealth {
    return this.shared(verdict)
  }

  /** How many values are kept, verdicts and details together. */
  get size(): number {
    return this.kept.size
  }

  private shared<A>(value: A): A {
    if (typeof value !== "object" || value === null) return value
    const key = JSON.stringify(value)
    const known = this.kept.get(key)
    if (known !== undefined) return known as A
    const own = Array.isArray(value) ? value.map((item: unknown) => this.shared(item)) : { ...value }
    if (!Array.isArray(value)) {
      const fields = own as Record<string, unknown>
      for (const field of Object.keys(fields)) fields[field] = this.shared(fields[field])
    }
    if (this.kept.size >= this.bound) this.kept.clear()
    const frozen = Object.freeze(own) as A
    this.kept.set(key, frozen)
    return frozen
  }
}
