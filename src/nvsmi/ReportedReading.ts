import * as Result from "effect/Result"
import type { Gpu } from "../domain/Gpu.ts"
import type { GpuFailure, NodeReading } from "../domain/NodeReading.ts"
import { availableValue } from "./NotAvailable.ts"
import { DeviceHandleFailure, GpuRequiresReset, NoDevicesFound, type NvsmiError } from "./NvsmiError.ts"
import { outputExcerpt } from "./OutputExcerpt.ts"
import { identifyGpu, type ReportedGpu, reportedIndexOf, wholeNumberOf } from "./ReportedGpu.ts"

/** Everything one nvidia-smi output reported, as printed, whichever format it came in. */
export interface ReportedReading {
  readonly format: NodeReading["format"]
  readonly gpus: ReadonlyArray<ReportedGpu>
  /** GPUs listed in "Unable to determine the device handle" lines ahead of the document. */
  readonly preambleFailures: ReadonlyArray<GpuFailure>
  readonly driverVersion?: string | undefined
  readonly kmdVersion?: string | undefined
  readonly cudaVersion?: string | undefined
  readonly cudaUmdVersion?: string | undefined
  readonly attachedGpus?: string | undefined
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/**
 * The node reading, or the error that stands for it when not one GPU could be read. GPUs without an
 * explicit index are numbered in document order, skipping the indexes of GPUs whose device handle failed
 * (nvidia-smi leaves those out of the document but keeps counting them). A GPU that repeats the UUID of
 * an earlier one is a `duplicate-uuid` failure, so one reading never gives two records one identity.
 */
export const readingOf = (reported: ReportedReading): Result.Result<NodeReading, NvsmiError> => {
  const skipped = new Set<number>()
  for (const failure of reported.preambleFailures) {
    if (failure.index !== undefined) {
      skipped.add(failure.index)
    }
  }
  const gpus: Array<Gpu> = []
  const indexByUuid = new Map<string, number>()
  const failures: Array<GpuFailure> = [...reported.preambleFailures]
  let next = 0
  for (const gpu of reported.gpus) {
    let index = reportedIndexOf(gpu)
    if (index === undefined) {
      while (skipped.has(next)) {
        next++
      }
      index = next
      next++
    }
    const identified = identifyGpu(gpu, index)
    if (identified._tag === "Failure") {
      failures.push(identified.failure)
      continue
    }
    const uuid = identified.gpu.uuid.toLowerCase()
    const first = indexByUuid.get(uuid)
    if (first === undefined) {
      indexByUuid.set(uuid, index)
      gpus.push(identified.gpu)
    } else {
      failures.push(duplicateOf(identified.gpu, first))
    }
  }
  if (gpus.length === 0) {
    if (failures.length === 0) {
      return Result.fail(new NoDevicesFound())
    }
    if (failures.every((failure) => failure.kind === "requires-reset")) {
      return Result.fail(new GpuRequiresReset({ gpuCount: failures.length }))
    }
    if (reported.preambleFailures.length > 0) {
      return Result.fail(new DeviceHandleFailure({ failures }))
    }
  }
  const reading: Mutable<NodeReading> = { gpus, failures, format: reported.format }
  const driverVersion = availableValue(reported.kmdVersion) ?? availableValue(reported.driverVersion)
  if (driverVersion !== undefined) {
    reading.driverVersion = driverVersion
  }
  const cudaVersion = availableValue(reported.cudaVersion) ?? availableValue(reported.cudaUmdVersion)
  if (cudaVersion !== undefined) {
    reading.cudaVersion = cudaVersion
  }
  const attachedGpus = wholeNumberOf(reported.attachedGpus)
  if (attachedGpus !== undefined) {
    reading.attachedGpus = attachedGpus
  }
  return Result.succeed(reading)
}

const duplicateOf = (gpu: Gpu, firstIndex: number): GpuFailure => {
  const failure: Mutable<GpuFailure> = {
    kind: "duplicate-uuid",
    index: gpu.index,
    reason: outputExcerpt(`UUID ${gpu.uuid} is also reported by GPU ${firstIndex}`),
  }
  if (gpu.pciBusId !== undefined) {
    failure.pciBusId = outputExcerpt(gpu.pciBusId)
  }
  return failure
}
