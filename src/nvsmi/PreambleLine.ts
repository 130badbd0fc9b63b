import type { GpuFailure } from "../domain/NodeReading.ts"
import { gpuConditionOf } from "./NotAvailable.ts"
import { outputExcerpt } from "./OutputExcerpt.ts"

/**
 * A line nvidia-smi prints ahead of its document: a GPU whose device handle it could not get (the other
 * GPUs follow in the document), or a warning such as a corrupted infoROM.
 */
export type PreambleLine =
  | { readonly _tag: "DeviceHandle"; readonly failure: GpuFailure }
  | { readonly _tag: "Warning" }

const busId = "([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\\.[0-9A-Fa-f])"
const deviceHandlePrefix = "^\\s*Unable to determine the device handle for GPU"
const indexedDeviceHandle = new RegExp(`${deviceHandlePrefix}\\s*(\\d+)\\s*:\\s*${busId}\\s*:?\\s*(.*)$`, "i")
const busDeviceHandle = new RegExp(`${deviceHandlePrefix}\\s*${busId}\\s*:?\\s*(.*)$`, "i")
const bareDeviceHandle = new RegExp(`${deviceHandlePrefix}\\b\\s*:?\\s*(.*)$`, "i")
const warning = /^\s*WARNING:/i

export const preambleLineOf = (rawLine: string): PreambleLine | undefined => {
  const line = rawLine.trim()
  if (warning.test(line)) {
    return { _tag: "Warning" }
  }
  const indexed = indexedDeviceHandle.exec(line)
  if (indexed !== null) {
    return deviceHandle(indexed[3], Number(indexed[1]), indexed[2])
  }
  const byBus = busDeviceHandle.exec(line)
  if (byBus !== null) {
    return deviceHandle(byBus[2], undefined, byBus[1])
  }
  const bare = bareDeviceHandle.exec(line)
  if (bare !== null) {
    return deviceHandle(bare[1], undefined, undefined)
  }
  return undefined
}

const deviceHandle = (
  rawReason: string | undefined,
  index: number | undefined,
  pciBusId: string | undefined,
): PreambleLine => {
  const reason = outputExcerpt(rawReason ?? "") || "device handle unavailable"
  const condition = gpuConditionOf(reason.split(".")[0])
  const failure: { -readonly [K in keyof GpuFailure]: GpuFailure[K] } = {
    kind: condition ?? "device-handle",
    reason,
  }
  if (index !== undefined && Number.isSafeInteger(index)) {
    failure.index = index
  }
  if (pciBusId !== undefined) {
    failure.pciBusId = pciBusId
  }
  return { _tag: "DeviceHandle", failure }
}
