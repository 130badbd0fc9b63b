import type { GpuCondition } from "../catalog/GpuCondition.ts"
import type { GpuModel } from "../catalog/GpuModel.ts"

/**
 * Which health fields a GPU of a model reports, and how a board's condition reads in them: shared by
 * `-q -x` and `--query-gpu`, so both say the same of the same board.
 */

/** Dynamic page retirement: ECC boards before Ampere (the T4); the others say N/A. */
export const reportsRetiredPages = (model: GpuModel): boolean =>
  model.ecc && model.remappedRowsBanks === undefined && model.architecture === "Turing"

/**
 * The banks of the row remapper when the GPU reports remapped rows (Ampere and later), else undefined.
 * An A100 in MIG mode reports N/A, as the real captures show.
 */
export const reportsRemappedRows = (model: GpuModel, migEnabled: boolean): number | undefined => {
  const banks = model.remappedRowsBanks ?? (model.architecture === "Ampere" ? 2560 : undefined)
  return migEnabled && model.architecture === "Ampere" ? undefined : banks
}

/**
 * `gpu_reset_status` (drivers before 580): a reset, reboot or drain-and-reset action reads as a required
 * reset, drain-and-reset also as a recommended drain; boards without ECC have no drain recommendation.
 */
export const resetStatus = (
  model: GpuModel,
  condition: GpuCondition,
): { readonly resetRequired: "Yes" | "No"; readonly drainAndResetRecommended: "Yes" | "No" | "N/A" } => {
  const action = condition.recoveryAction
  return {
    resetRequired: action === "reset" || action === "reboot" || action === "drain-and-reset" ? "Yes" : "No",
    drainAndResetRecommended: !model.ecc ? "N/A" : action === "drain-and-reset" ? "Yes" : "No",
  }
}

/** `fabric/status` and `fabric/health/summary` of a fabric-attached GPU; N/A without a fabric. */
export const fabricStatus = (
  model: GpuModel,
  condition: GpuCondition,
): { readonly status: string; readonly summary: string } => {
  if (!model.nvswitchFabric) return { status: "N/A", summary: "N/A" }
  return condition.fabricDown
    ? { status: "Unknown Error", summary: "Unhealthy" }
    : { status: "Success", summary: "Healthy" }
}
