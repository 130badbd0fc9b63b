import type { Gpu } from "./Gpu.ts"
import type { GpuHealth, GpuHealthSignals, HealthState } from "./GpuHealth.ts"

/**
 * The verdict on a GPU's condition: which reasons the signals of one reading give, the state they add
 * up to (the worst of them), and whether the board qualifies for an RMA. Pure: the thresholds and what
 * the GPU's node-mates say come in the context. Absent signals give no reason: unknown is not wrong.
 */

/** The limits of the verdict, each a setting of the inventory processor with its published value as default. */
export interface HealthThresholds {
  /** Retired pages (single-bit + double-bit) at which a board is failed. */
  readonly retiredPagesLimit: number
  /** Uncorrectable remapped rows at which a board is failed. */
  readonly remappedRowsLimit: number
  /** Volatile uncorrectable ECC errors above which a GPU is degraded. */
  readonly volatileUncorrectableLimit: number
}

/** DCGM's `DCGM_LIMIT_MAX_RETIRED_PAGES`, 512 uncorrectable remapped rows, any volatile uncorrectable error. */
export const defaultHealthThresholds: HealthThresholds = Object.freeze({
  retiredPagesLimit: 63,
  remappedRowsLimit: 512,
  volatileUncorrectableLimit: 0,
})

export interface HealthContext {
  readonly thresholds: HealthThresholds
  /**
   * The VBIOS most GPUs of the same product on the GPU's node carry; absent when there is no single
   * most common one (a tie, or no GPU reports one).
   */
  readonly commonVbios?: string
}

/** One row of the verdict table: a reason code, the state it gives, whether it makes the board RMA-eligible. */
export interface HealthReason {
  readonly code: string
  readonly state: Exclude<HealthState, "ok">
  readonly rmaEligible: boolean
  /** When the reason holds, in the words of the docs' table. */
  readonly when: string
  readonly applies: (signals: GpuHealthSignals, context: HealthContext) => boolean
}

/** Recovery actions that take a GPU out of service until a reboot or a drain and reset. */
const severeRecoveryActions: ReadonlySet<string> = new Set(["reboot", "drain-and-reset", "system-reboot"])

const retiredPagesTotal = (signals: GpuHealthSignals): number | undefined => {
  const pages = signals.retiredPages
  if (pages?.singleBit === undefined && pages?.doubleBit === undefined) return undefined
  return (pages.singleBit ?? 0) + (pages.doubleBit ?? 0)
}

/** A fabric the GPU is attached to: one that reports a state other than `not-supported`. */
const fabricAttached = (signals: GpuHealthSignals): boolean =>
  signals.fabric?.state !== undefined && signals.fabric.state !== "not-supported"

/** The verdict table, in the order reasons are listed: failed ones first. docs/health.md holds the same table. */
export const healthReasons: ReadonlyArray<HealthReason> = [
  {
    code: "row-remap-failure",
    state: "failed",
    rmaEligible: true,
    when: "`remappedRows.failure` is true",
    applies: (signals) => signals.remappedRows?.failure === true,
  },
  {
    code: "remapped-rows-limit",
    state: "failed",
    rmaEligible: true,
    when: "`remappedRows.uncorrectable` ≥ `healthRemappedRowsLimit` (512)",
    applies: (signals, context) =>
      signals.remappedRows?.uncorrectable !== undefined &&
      signals.remappedRows.uncorrectable >= context.thresholds.remappedRowsLimit,
  },
  {
    code: "retired-pages-limit",
    state: "failed",
    rmaEligible: true,
    when: "`retiredPages.singleBit` + `retiredPages.doubleBit` ≥ `healthRetiredPagesLimit` (63)",
    applies: (signals, context) => {
      const total = retiredPagesTotal(signals)
      return total !== undefined && total >= context.thresholds.retiredPagesLimit
    },
  },
  {
    code: "recovery-action-severe",
    state: "failed",
    rmaEligible: false,
    when: "`recoveryAction` is `reboot`, `drain-and-reset` or `system-reboot`",
    applies: (signals) => signals.recoveryAction !== undefined && severeRecoveryActions.has(signals.recoveryAction),
  },
  {
    code: "row-remap-pending",
    state: "degraded",
    rmaEligible: false,
    when: "`remappedRows.pending` is true",
    applies: (signals) => signals.remappedRows?.pending === true,
  },
  {
    code: "retired-pages-pending",
    state: "degraded",
    rmaEligible: false,
    when: "`retiredPages.pending` is true",
    applies: (signals) => signals.retiredPages?.pending === true,
  },
  {
    code: "recovery-action",
    state: "degraded",
    rmaEligible: false,
    when: "`recoveryAction` is any other action than `none` (`reset`, `drain-p2p`, `bus-reset`, ...)",
    applies: (signals) =>
      signals.recoveryAction !== undefined &&
      signals.recoveryAction !== "none" &&
      !severeRecoveryActions.has(signals.recoveryAction),
  },
  {
    code: "ecc-volatile-uncorrectable",
    state: "degraded",
    rmaEligible: false,
    when: "`ecc.volatileUncorrectable` > `healthVolatileUncorrectableLimit` (0)",
    applies: (signals, context) =>
      signals.ecc?.volatileUncorrectable !== undefined &&
      signals.ecc.volatileUncorrectable > context.thresholds.volatileUncorrectableLimit,
  },
  {
    code: "pcie-width-reduced",
    state: "degraded",
    rmaEligible: false,
    when: "`pcie.linkWidth.current` < `pcie.linkWidth.max`",
    applies: (signals) => {
      const width = signals.pcie?.linkWidth
      return width?.current !== undefined && width.max !== undefined && width.current < width.max
    },
  },
  {
    code: "fabric-unhealthy",
    state: "degraded",
    rmaEligible: false,
    when: "on a fabric-attached GPU (`fabric.state` not `not-supported`): `fabric.state` `completed` with `fabric.status` not `success`, or `fabric.summary` not `healthy`",
    applies: (signals) => {
      if (!fabricAttached(signals)) return false
      const fabric = signals.fabric
      const failedStatus = fabric?.state === "completed" && fabric.status !== undefined && fabric.status !== "success"
      const unhealthy = fabric?.summary !== undefined && fabric.summary !== "healthy"
      return failedStatus || unhealthy
    },
  },
  {
    code: "vbios-mismatch",
    state: "degraded",
    rmaEligible: false,
    when: "`vbios` differs from the one most GPUs of the same product on the node carry (no verdict on a tie)",
    applies: (signals, context) =>
      signals.vbios !== undefined && context.commonVbios !== undefined && signals.vbios !== context.commonVbios,
  },
]

const noReasons: ReadonlyArray<string> = Object.freeze([])

/** The verdict on one GPU's signals: every reason that applies, in table order; the state is the worst of them. */
export const healthVerdict = (signals: GpuHealthSignals, context: HealthContext): GpuHealth => {
  let state: HealthState = "ok"
  let rmaEligible = false
  let reasons: Array<string> | undefined
  for (const reason of healthReasons) {
    if (!reason.applies(signals, context)) continue
    reasons ??= []
    reasons.push(reason.code)
    if (reason.state === "failed") state = "failed"
    else if (state === "ok") state = "degraded"
    rmaEligible ||= reason.rmaEligible
  }
  return { ...signals, state, reasons: reasons === undefined ? noReasons : reasons, rmaEligible }
}

/**
 * The most common VBIOS of each product among the GPUs of one reading (`""` for GPUs without a product
 * name); a product whose GPUs tie between versions has none.
 */
export const commonVbiosByProduct = (gpus: ReadonlyArray<Gpu>): ReadonlyMap<string, string> => {
  const counts = new Map<string, Map<string, number>>()
  for (const gpu of gpus) {
    const vbios = gpu.health?.vbios
    if (vbios === undefined) continue
    const product = gpu.product ?? ""
    const byVersion = counts.get(product) ?? new Map<string, number>()
    byVersion.set(vbios, (byVersion.get(vbios) ?? 0) + 1)
    counts.set(product, byVersion)
  }
  const common = new Map<string, string>()
  for (const [product, byVersion] of counts) {
    let best: string | undefined
    let bestCount = 0
    let tied = false
    for (const [version, count] of byVersion) {
      if (count > bestCount) {
        best = version
        bestCount = count
        tied = false
      } else if (count === bestCount) tied = true
    }
    if (best !== undefined && !tied) common.set(product, best)
  }
  return common
}

/** The verdict on each GPU of one reading that reports its condition, by UUID; GPUs that report none have none. */
export const readingHealth = (
  gpus: ReadonlyArray<Gpu>,
  thresholds: HealthThresholds,
): ReadonlyMap<string, GpuHealth> => {
  const verdicts = new Map<string, GpuHealth>()
  let common: ReadonlyMap<string, string> | undefined
  for (const gpu of gpus) {
    if (gpu.health === undefined) continue
    common ??= commonVbiosByProduct(gpus)
    const commonVbios = common.get(gpu.product ?? "")
    verdicts.set(
      gpu.uuid,
      healthVerdict(gpu.health, { thresholds, ...(commonVbios === undefined ? {} : { commonVbios }) }),
    )
  }
  return verdicts
}

/** Whether two verdicts differ in what an operator acts on: the state or the reasons, never a counter alone. */
export const healthChanged = (before: GpuHealth, after: GpuHealth): boolean =>
  before.state !== after.state ||
  before.reasons.length !== after.reasons.length ||
  before.reasons.some((reason, index) => reason !== after.reasons[index])

const sameValue = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const keysA = Object.keys(a)
  if (keysA.length !== Object.keys(b).length) return false
  return keysA.every(
    (key) =>
      Object.hasOwn(b, key) && sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  )
}

/** Whether two verdicts are equal in every field and counter: the inventory then keeps the one it has. */
export const sameHealth = (a: GpuHealth | undefined, b: GpuHealth | undefined): boolean => sameValue(a, b)
