import { type GpuCondition, maxLinkWidth } from "../catalog/GpuCondition.ts"

/** The ground truth of a GPU's health, in the service's words: `ok`, `degraded` (needs attention), `failed` (out of service). */
export type TrueHealthState = "ok" | "degraded" | "failed"

/** DCGM's `DCGM_LIMIT_MAX_RETIRED_PAGES`: retired pages (single- plus double-bit) at which a board is to be replaced. */
export const retiredPagesLimit = 63

/** DCGM's limit of uncorrectable remapped rows at which a board is to be replaced. */
export const remappedRowsLimit = 512

/**
 * The health a board's condition amounts to, by the published rules (docs/accuracy.md lists them with
 * their sources). The simulator's own reading of its own boards: the service's verdict is compared with
 * it, so it shares no code with it.
 */
export const trueHealthState = (condition: GpuCondition): TrueHealthState => {
  if (
    condition.remapFailure ||
    condition.remappedUncorrectable >= remappedRowsLimit ||
    condition.retiredDoubleBit >= retiredPagesLimit ||
    condition.recoveryAction === "reboot" ||
    condition.recoveryAction === "drain-and-reset"
  )
    return "failed"
  if (
    condition.remapPending ||
    condition.retirementPending ||
    condition.volatileUncorrectable > 0 ||
    condition.recoveryAction !== "none" ||
    condition.linkWidth < maxLinkWidth ||
    condition.fabricDown
  )
    return "degraded"
  return "ok"
}
