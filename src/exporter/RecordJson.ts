import type { GpuRecord } from "../domain/GpuRecord.ts"

// Listing every field once here, checked against the type, keeps the output complete and unique.
const fieldOrder = {
  schema: true,
  event: true,
  id: true,
  cluster: true,
  node: true,
  machine: true,
  source: true,
  chassis: true,
  gpu: true,
  time: true,
  uuid: true,
  index: true,
  product: true,
  pciBusId: true,
  moduleId: true,
  migMode: true,
  migDevices: true,
  driverVersion: true,
  cudaVersion: true,
  providerId: true,
  serialShared: true,
  previousCluster: true,
  previousNode: true,
  previousMachine: true,
  health: true,
  previousHealthState: true,
} as const satisfies Record<keyof GpuRecord, true>

/**
 * The fields of a `gpu-serials/v1` record in the order every JSON output writes them: the schema,
 * event and id first, then the Go original's seven, then the rest.
 */
export const recordFields = Object.keys(fieldOrder) as ReadonlyArray<keyof GpuRecord>

/**
 * The record as one line of JSON: keys in `recordFields` order, each once, absent optional fields
 * omitted, and nothing that is not a record field.
 */
export const recordJson = (record: GpuRecord): string => {
  const ordered: Record<string, unknown> = {}
  for (const field of recordFields) {
    const value = record[field]
    if (value !== undefined) ordered[field] = value
  }
  return JSON.stringify(ordered)
}
