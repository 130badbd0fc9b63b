import type { GpuHealth } from "../../domain/GpuHealth.ts"
import type { GpuRecord } from "../../domain/GpuRecord.ts"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"

/**
 * A batch of events as the columns of the statements that write it: one array per column, so a
 * batch of any size is one parameterised statement with a fixed number of parameters (`unnest`).
 */

/** The history table's columns, in the order of `historyColumns`. */
export const historyColumns = [
  ["id", "text"],
  ["event", "text"],
  ["cluster", "text"],
  ["node", "text"],
  ["machine", "text"],
  ["source", "text"],
  ["chassis", "text"],
  ["serial", "text"],
  ["uuid", "text"],
  ["gpu_index", "integer"],
  ["product", "text"],
  ["pci_bus_id", "text"],
  ["module_id", "integer"],
  ["mig_mode", "text"],
  ["driver_version", "text"],
  ["cuda_version", "text"],
  ["provider_id", "text"],
  ["serial_shared", "boolean"],
  ["previous_node", "text"],
  ["previous_machine", "text"],
  ["read_time", "timestamptz"],
  ["health_state", "text"],
  ["previous_health_state", "text"],
  ["health", "jsonb"],
  ["previous_cluster", "text"],
  ["mig_devices", "jsonb"],
] as const

/** One value of a row, as the driver sends it. */
export type Cell = string | number | boolean | null

/** A GPU's health as a `jsonb` value; null when the reading said nothing of it. */
export const healthJson = (health: GpuHealth | undefined): string | null =>
  health === undefined ? null : JSON.stringify(health)

const historyRow = (record: GpuRecord): ReadonlyArray<Cell> => [
  record.id,
  record.event,
  record.cluster,
  record.node,
  record.machine,
  record.source,
  record.chassis,
  record.gpu,
  record.uuid,
  record.index,
  record.product ?? null,
  record.pciBusId ?? null,
  record.moduleId ?? null,
  record.migMode ?? null,
  record.driverVersion ?? null,
  record.cudaVersion ?? null,
  record.providerId ?? null,
  record.serialShared,
  record.previousNode ?? null,
  record.previousMachine ?? null,
  record.time,
  record.health?.state ?? null,
  record.previousHealthState ?? null,
  healthJson(record.health),
  record.previousCluster ?? null,
  record.migDevices === undefined ? null : JSON.stringify(record.migDevices),
]

/** Rows as column arrays: `columns[i][j]` is column i of row j. */
export const transpose = (rows: ReadonlyArray<ReadonlyArray<Cell>>, width: number): Array<Array<Cell>> =>
  Array.from({ length: width }, (_, column) => rows.map((row) => row[column] ?? null))

/** The history rows of a batch, as one array per column. */
export const historyParameters = (events: ReadonlyArray<InventoryEvent>): Array<Array<Cell>> =>
  transpose(
    events.map((event) => historyRow(event.record)),
    historyColumns.length,
  )

/** The current-state columns an event sets, in the order of `currentColumns`. */
export const currentColumns = [
  ["cluster", "text"],
  ["uuid", "text"],
  ["node", "text"],
  ["machine", "text"],
  ["serial", "text"],
  ["chassis", "text"],
  ["product", "text"],
  ["provider_id", "text"],
  ["driver_version", "text"],
  ["cuda_version", "text"],
  ["serial_shared", "boolean"],
  ["first_seen", "timestamptz"],
  ["last_seen", "timestamptz"],
  ["health_state", "text"],
  ["health", "jsonb"],
] as const

/** What a batch does to the current state: the GPUs now somewhere, and those removed. */
export interface CurrentChanges {
  readonly located: Array<Array<Cell>>
  /** Columns cluster, uuid, removal time. */
  readonly removed: Array<Array<Cell>>
}

/** A GPU gone from a cluster: removed there, or moved from there to another cluster. */
interface Departure {
  readonly cluster: string
  readonly uuid: string
  readonly time: string
}

/**
 * The current-state changes of a batch. Events of one GPU apply in order, so its last located event
 * (added, moved, observed) says where it is, a `removed` after it marks it removed there, and its
 * first event's time is when it was first seen, should the row be new. A move across clusters also
 * marks the GPU removed in the cluster it left, whose own removal the hub folds into the move.
 */
export const currentChanges = (events: ReadonlyArray<InventoryEvent>): CurrentChanges => {
  const gpus = new Map<string, { first: string; located?: GpuRecord; removed?: Departure }>()
  const gpuOf = (cluster: string, uuid: string, time: string) => {
    const key = `${cluster}\u0000${uuid}`
    const gpu = gpus.get(key) ?? { first: time }
    gpus.set(key, gpu)
    return gpu
  }
  for (const { record } of events) {
    const gpu = gpuOf(record.cluster, record.uuid, record.time)
    if (record.event === "removed") gpu.removed = record
    else {
      gpu.located = record
      delete gpu.removed
    }
    const left = record.previousCluster
    if (left !== undefined && left !== record.cluster) {
      gpuOf(left, record.uuid, record.time).removed = { cluster: left, uuid: record.uuid, time: record.time }
    }
  }
  const located: Array<ReadonlyArray<Cell>> = []
  const removed: Array<ReadonlyArray<Cell>> = []
  for (const { first, located: record, removed: gone } of gpus.values()) {
    if (record !== undefined) {
      located.push([
        record.cluster,
        record.uuid,
        record.node,
        record.machine,
        record.gpu,
        record.chassis,
        record.product ?? null,
        record.providerId ?? null,
        record.driverVersion ?? null,
        record.cudaVersion ?? null,
        record.serialShared,
        first,
        record.time,
        record.health?.state ?? null,
        healthJson(record.health),
      ])
    }
    if (gone !== undefined) removed.push([gone.cluster, gone.uuid, gone.time])
  }
  return { located: transpose(located, currentColumns.length), removed: transpose(removed, 3) }
}

/** `unnest($1::text[], $2::integer[], …)` over the columns, parameters numbered from 1. */
export const unnestOf = (columns: ReadonlyArray<readonly [string, string]>): string =>
  `unnest(${columns.map(([, type], index) => `$${index + 1}::${type}[]`).join(", ")})`
