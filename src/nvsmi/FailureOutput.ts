import type { GpuFailure } from "../domain/NodeReading.ts"
import {
  DeviceHandleFailure,
  DriverNotLoaded,
  GpuRequiresReset,
  NoDevicesFound,
  NvmlInitFailed,
  NvmlVersionMismatch,
  type NvsmiError,
  UnsupportedQueryField,
} from "./NvsmiError.ts"
import { outputExcerpt } from "./OutputExcerpt.ts"
import { preambleLineOf } from "./PreambleLine.ts"

/** nvidia-smi's documented exit code for "NVIDIA driver is not loaded". */
const driverNotLoadedExitCode = 9

const scannedLength = 64 * 1024
const driverNotLoaded = /NVIDIA-SMI has failed because it couldn'?t communicate with the NVIDIA driver/i
const nvmlVersionMismatch = /Failed to initialize NVML: Driver\/library version mismatch/i
const nvmlLibraryVersion = /NVML library version: (\d+(?:\.\d+)*)/i
const nvmlInitFailed = /Failed to initialize NVML: ([^\n]*)/i
const noDevicesFound = /No devices were found/i
const unsupportedQueryField = /Field "([^"]{1,200})" is not a valid field to query/i
/** What `unsupportedQueryField` needs before the text is flattened: most outputs are ruled out without a copy. */
const refusalWords = /valid\s+field\s+to\s+query/i
const requiresReset = /GPU requires reset/i
const tableGpuRow = /^\|\s+\d+\s+.*\|\s+[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]\s/

/**
 * What went wrong, read from output that is not an nvidia-smi document (stdout, stderr or both, and the exit
 * code when known): driver not loaded, NVML mismatch, no devices, device handles that failed with no
 * readable GPU left, GPUs that require a reset, a rejected query field. `undefined` when the text says
 * none of these.
 */
export const classifyFailureOutput = (output: string, exitCode?: number): NvsmiError | undefined => {
  const head = output.slice(0, scannedLength)
  const flat = head
    .replace(/[‘’`´]/g, "'")
    .replace(/[“”]/g, '"')
    .replace(/\s+/g, " ")
  if (driverNotLoaded.test(flat)) {
    return new DriverNotLoaded({ excerpt: outputExcerpt(head) })
  }
  if (nvmlVersionMismatch.test(flat)) {
    const libraryVersion = nvmlLibraryVersion.exec(flat)?.[1]
    return libraryVersion === undefined
      ? new NvmlVersionMismatch({})
      : new NvmlVersionMismatch({ libraryVersion: outputExcerpt(libraryVersion) })
  }
  const nvmlInit = nvmlInitFailed.exec(head)
  if (nvmlInit !== null) {
    return new NvmlInitFailed({ reason: outputExcerpt(nvmlInit[1] ?? "") || "unknown reason" })
  }
  if (noDevicesFound.test(flat)) {
    return new NoDevicesFound()
  }
  const field = unsupportedQueryFieldIn(head)
  if (field !== undefined) {
    return new UnsupportedQueryField({ field })
  }
  const { failures, tableGpuRows } = deviceHandleFailuresIn(head)
  if (failures.length > 0) {
    return tableGpuRows === 0
      ? new DeviceHandleFailure({ failures })
      : new DeviceHandleFailure({ failures, survivingGpus: tableGpuRows })
  }
  const resetLines = head.split("\n").filter((line) => requiresReset.test(line)).length
  if (resetLines > 0) {
    return new GpuRequiresReset({ gpuCount: resetLines })
  }
  if (exitCode === driverNotLoadedExitCode) {
    return new DriverNotLoaded({ excerpt: outputExcerpt(head) })
  }
  return undefined
}

/** The field named in nvidia-smi's `Field "x" is not a valid field to query.` answer, if the output is that. */
export const unsupportedQueryFieldIn = (output: string): string | undefined => {
  const head = output.slice(0, scannedLength)
  // Every successful CSV reading is asked this: only a refusal's own words are worth flattening the text for.
  if (!refusalWords.test(head)) return undefined
  const flat = head.replace(/[“”]/g, '"').replace(/\s+/g, " ")
  const field = unsupportedQueryField.exec(flat)?.[1]
  return field === undefined ? undefined : outputExcerpt(field)
}

const deviceHandleFailuresIn = (
  output: string,
): { readonly failures: ReadonlyArray<GpuFailure>; readonly tableGpuRows: number } => {
  const failures: Array<GpuFailure> = []
  let tableGpuRows = 0
  for (const line of output.split("\n")) {
    const preamble = preambleLineOf(line)
    if (preamble?._tag === "DeviceHandle") {
      failures.push(preamble.failure)
    } else if (tableGpuRow.test(line)) {
      tableGpuRows++
    }
  }
  return { failures, tableGpuRows }
}
