import { isAtLeast } from "../catalog/DriverRelease.ts"

/**
 * Which parts of nvidia-smi's output a driver release has. The DTD number is not bumped for every
 * element change, so the output is keyed on the release, as the real tool's is.
 */
export interface DriverFeatures {
  readonly dtd: "nvsmi_device_v12.dtd" | "nvsmi_device_v13.dtd"
  /** `platformInfo` and the `platform.*` query fields (570+); before, `gpu_module_id`. */
  readonly platformInfo: boolean
  readonly fabricGuid: boolean
  readonly resetStatus: boolean
  readonly recoveryAction: boolean
  readonly c2cMode: boolean
  readonly bbxFlush: boolean
  readonly vgpuHeterogeneousMode: boolean
  readonly pciClass: boolean
  readonly dramEncryption: boolean
  readonly memoryPowerReadings: boolean
  readonly powerSmoothing: boolean
  readonly averagePower: boolean
  readonly eventReasonCounters: boolean
  readonly edppMultiplier: boolean
  readonly extendedFabricHealth: boolean
  /** `cliqueId`, `clusterUuid` and `health` under `fabric`, and `sparse_operation_mode` (550+). */
  readonly fabricIdentity: boolean
  /** Repair counters under `ecc_errors` and inactive remapped rows (590+). */
  readonly repairCounters: boolean
  readonly capabilities: boolean
  readonly pdi: boolean
}

export const featuresOf = (driverVersion: string): DriverFeatures => {
  const v13 = isAtLeast(driverVersion, "580")
  return {
    dtd: v13 ? "nvsmi_device_v13.dtd" : "nvsmi_device_v12.dtd",
    platformInfo: isAtLeast(driverVersion, "570"),
    fabricGuid: isAtLeast(driverVersion, "570.124"),
    resetStatus: !v13,
    recoveryAction: isAtLeast(driverVersion, "570"),
    c2cMode: isAtLeast(driverVersion, "555"),
    bbxFlush: isAtLeast(driverVersion, "550"),
    vgpuHeterogeneousMode: isAtLeast(driverVersion, "550"),
    pciClass: isAtLeast(driverVersion, "550"),
    dramEncryption: isAtLeast(driverVersion, "570"),
    memoryPowerReadings: isAtLeast(driverVersion, "570"),
    powerSmoothing: isAtLeast(driverVersion, "570"),
    averagePower: isAtLeast(driverVersion, "570.124"),
    eventReasonCounters: v13,
    edppMultiplier: isAtLeast(driverVersion, "590"),
    extendedFabricHealth: v13,
    fabricIdentity: isAtLeast(driverVersion, "550"),
    repairCounters: isAtLeast(driverVersion, "590"),
    capabilities: isAtLeast(driverVersion, "570"),
    pdi: v13,
  }
}
