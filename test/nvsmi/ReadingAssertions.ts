import { Result } from "effect"
import type { NodeReading } from "../../src/domain/NodeReading.ts"
import type { NvsmiError } from "../../src/nvsmi/NvsmiError.ts"

/** The reading, or a thrown assertion naming the error kind and message. */
export const readingFrom = (result: Result.Result<NodeReading, NvsmiError>): NodeReading => {
  if (Result.isFailure(result)) {
    throw new Error(`expected a reading, got ${result.failure.kind}: ${result.failure.message}`)
  }
  return result.success
}

/** The error, or a thrown assertion showing the reading that came instead. */
export const errorFrom = (result: Result.Result<NodeReading, NvsmiError>): NvsmiError => {
  if (Result.isSuccess(result)) {
    throw new Error(`expected an error, got a reading with ${result.success.gpus.length} GPU(s)`)
  }
  return result.failure
}
