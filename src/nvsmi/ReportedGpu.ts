import type { Gpu, GpuPlatform } from "../domain/Gpu.ts"
import type { GpuFailure } from "../domain/NodeReading.ts"
import { availableValue, gpuConditionOf } from "./NotAvailable.ts"
import { outputExcerpt } from "./OutputExcerpt.ts"
import { healthSignalsOf, type ReportedHealth } from "./ReportedHealth.ts"

export type ReportedGpuField =
  | "index"
  | "uuid"
  | "serial"
  | "product"
  | "pciBusId"
  | "moduleId"
  | "migMode"
  | "chassisSerial"
  | "slotNumber"
  | "trayIndex"
  | "hostId"
  | "peerType"
  | "fabricGuid"
  | "condition"

/**
 * What nvidia-smi printed for one GPU, field by field, before "not available" spellings are normalised away.
 * `condition` holds a GPU-wide state (`[GPU requires reset]`) printed in a column that is otherwise not read.
 * `health` holds the health values apart: a bracketed condition there does not make the GPU a failure.
 */
export type ReportedGpu = { [Field in ReportedGpuField]?: string } & { health?: ReportedHealth }

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

const uuidShape = /^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const decimal = /^\d{1,9}$/

/** The `index` nvidia-smi printed for the GPU, when it printed a usable one. */
export const reportedIndexOf = (reported: ReportedGpu): number | undefined => wholeNumberOf(reported.index)

/** A non-negative whole number as printed (`0`, `7`), else `undefined` (`N/A`, `-1`, `1.5`). */
export const wholeNumberOf = (raw: string | undefined): number | undefined => {
  const value = availableValue(raw)
  return value !== undefined && decimal.test(value) ? Number(value) : undefined
}

/**
 * The GPU as the domain knows it, or why it cannot be one: a GPU that announces `[GPU requires reset]` or
 * `GPU is lost` in any field, or that has no usable UUID, is a failure rather than a GPU with gaps.
 */
export const identifyGpu = (
  reported: ReportedGpu,
  index: number,
): { readonly _tag: "Gpu"; readonly gpu: Gpu } | { readonly _tag: "Failure"; readonly failure: GpuFailure } => {
  const pciBusId = availableValue(reported.pciBusId)
  const failure = (kind: GpuFailure["kind"], reason: string) => {
    const failed: Mutable<GpuFailure> = { kind, index, reason }
    if (pciBusId !== undefined) {
      failed.pciBusId = outputExcerpt(pciBusId)
    }
    return { _tag: "Failure", failure: failed } as const
  }
  for (const value of Object.values(reported)) {
    // The health values are an object of their own, and never make the GPU a failure.
    if (typeof value !== "string") continue
    const condition = gpuConditionOf(value)
    if (condition === "requires-reset") {
      return failure(condition, "GPU requires reset")
    }
    if (condition === "lost") {
      return failure(condition, "GPU is lost")
    }
  }
  const uuid = availableValue(reported.uuid)
  if (uuid === undefined) {
    return failure("unidentified", "no UUID reported")
  }
  if (!uuidShape.test(uuid)) {
    return failure("unidentified", "UUID is not of the form GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx")
  }
  const gpu: Mutable<Gpu> = { index, uuid }
  const serial = availableValue(reported.serial)
  if (serial !== undefined) {
    gpu.serial = serial
  }
  const product = availableValue(reported.product)
  if (product !== undefined) {
    gpu.product = product
  }
  if (pciBusId !== undefined) {
    gpu.pciBusId = pciBusId
  }
  const moduleId = wholeNumberOf(reported.moduleId)
  if (moduleId !== undefined) {
    gpu.moduleId = moduleId
  }
  const migMode = availableValue(reported.migMode)
  if (migMode !== undefined) {
    gpu.migMode = migMode
  }
  const platform = platformOf(reported)
  if (platform !== undefined) {
    gpu.platform = platform
  }
  const health = healthSignalsOf(reported.health)
  if (health !== undefined) {
    gpu.health = health
  }
  return { _tag: "Gpu", gpu }
}

const platformOf = (reported: ReportedGpu): GpuPlatform | undefined => {
  const platform: Mutable<GpuPlatform> = {}
  let present = false
  const chassisSerial = availableValue(reported.chassisSerial)
  if (chassisSerial !== undefined) {
    platform.chassisSerial = chassisSerial
    present = true
  }
  const slotNumber = availableValue(reported.slotNumber)
  if (slotNumber !== undefined) {
    platform.slotNumber = slotNumber
    present = true
  }
  const trayIndex = availableValue(reported.trayIndex)
  if (trayIndex !== undefined) {
    platform.trayIndex = trayIndex
    present = true
  }
  const hostId = availableValue(reported.hostId)
  if (hostId !== undefined) {
    platform.hostId = hostId
    present = true
  }
  const peerType = availableValue(reported.peerType)
  if (peerType !== undefined) {
    platform.peerType = peerType
    present = true
  }
  const fabricGuid = availableValue(reported.fabricGuid)
  if (fabricGuid !== undefined) {
    platform.fabricGuid = fabricGuid
    present = true
  }
  return present ? platform : undefined
}
