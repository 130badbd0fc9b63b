import type { GpuHealth } from "../domain/GpuHealth.ts"

/** The part of a health verdict an operator reads first; a stored location keeps the same fields. */
export type HealthVerdictText = Pick<GpuHealth, "state" | "reasons" | "rmaEligible">

/**
 * A GPU's health in one table cell: the state, then the reason codes when it is not ok, and `(RMA)` for
 * a board that qualifies for one (`failed: row-remap-failure (RMA)`); `-` when nothing told it.
 */
export const healthText = (health: HealthVerdictText | undefined): string => {
  if (health === undefined) return "-"
  const reasons = health.reasons.length === 0 ? "" : `: ${health.reasons.join(",")}`
  return `${health.state}${reasons}${health.rmaEligible ? " (RMA)" : ""}`
}
