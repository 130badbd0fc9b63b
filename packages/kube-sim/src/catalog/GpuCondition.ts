/** What the driver asks for before the GPU is trusted again, as `gpu_recovery_action` names it (lower-case, dashed). */
export type RecoveryAction = "none" | "reset" | "reboot" | "drain-p2p" | "drain-and-reset"

/**
 * The physical condition of a GPU board: what its memory, link and fabric report. It travels with the
 * board when it moves; nvidia-smi shows it in the fields the host's driver has.
 */
export interface GpuCondition {
  /** A row remap waits for a reset (Ampere and later). */
  readonly remapPending: boolean
  /** A remap found no spare row: the board's memory cannot be repaired in place. */
  readonly remapFailure: boolean
  /** Rows remapped for uncorrectable errors since manufacture. */
  readonly remappedUncorrectable: number
  /** A page retirement waits for a reset (before Ampere). */
  readonly retirementPending: boolean
  /** Pages retired for double-bit errors. */
  readonly retiredDoubleBit: number
  /** Uncorrectable ECC errors since the driver loaded (cleared by a reset). */
  readonly volatileUncorrectable: number
  /** Uncorrectable ECC errors over the board's life. */
  readonly aggregateUncorrectable: number
  /** Lanes of the PCIe link now; every catalog board has 16 at most. */
  readonly linkWidth: number
  /** The NVLink fabric manager failed to bring the GPU into its partition (NVL trays). */
  readonly fabricDown: boolean
  readonly recoveryAction: RecoveryAction
}

export const maxLinkWidth = 16

export const healthyCondition: GpuCondition = Object.freeze({
  remapPending: false,
  remapFailure: false,
  remappedUncorrectable: 0,
  retirementPending: false,
  retiredDoubleBit: 0,
  volatileUncorrectable: 0,
  aggregateUncorrectable: 0,
  linkWidth: maxLinkWidth,
  fabricDown: false,
  recoveryAction: "none",
})

/** A short key for a condition: the outputs of GPUs in the same condition are rendered once. */
export const conditionKey = (condition: GpuCondition): string =>
  condition === healthyCondition
    ? "healthy"
    : [
        condition.remapPending ? 1 : 0,
        condition.remapFailure ? 1 : 0,
        condition.remappedUncorrectable,
        condition.retirementPending ? 1 : 0,
        condition.retiredDoubleBit,
        condition.volatileUncorrectable,
        condition.aggregateUncorrectable,
        condition.linkWidth,
        condition.fabricDown ? 1 : 0,
        condition.recoveryAction,
      ].join(",")
