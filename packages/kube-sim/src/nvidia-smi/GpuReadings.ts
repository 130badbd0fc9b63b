import type { GpuModel } from "../catalog/GpuModel.ts"
import type { GpuIdentity } from "../catalog/SimulatedHost.ts"

/** The live values of an idle GPU, spread per board so a fleet does not read identically. */
export interface GpuReadings {
  readonly temperatureC: number
  readonly memoryTemperatureC: number
  readonly powerDrawW: number
  readonly memoryPowerDrawW: number
  readonly memoryUsedMiB: number
  readonly txKBs: number
  readonly rxKBs: number
  readonly graphicsClockMHz: number
  readonly memoryClockMHz: number
  readonly videoClockMHz: number
}

export const readingsOf = (model: GpuModel, identity: GpuIdentity): GpuReadings => {
  const spread = identity.variance
  const temperature = 27 + (spread % 17)
  return {
    temperatureC: temperature,
    memoryTemperatureC: temperature + (spread % 7),
    powerDrawW: model.idlePowerW + (spread % 900) / 100,
    memoryPowerDrawW: 20 + (spread % 2500) / 100,
    memoryUsedMiB: 1 + (spread % 3),
    txKBs: spread % 613,
    rxKBs: (spread * 7) % 419,
    graphicsClockMHz: Math.max(210, Math.round(model.maxGraphicsMHz / 5.7 / 15) * 15),
    memoryClockMHz: model.maxMemoryMHz,
    videoClockMHz: Math.round(model.maxVideoMHz / 2),
  }
}

export const wattsText = (watts: number): string => `${watts.toFixed(2)} W`
