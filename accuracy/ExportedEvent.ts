import type { TrueHealthState } from "@gpu-serials/kube-sim"

/** The kinds of inventory event a `gpu-serials/v1` record carries. */
export type EventKind = "added" | "moved" | "removed" | "observed" | "health"

const eventKinds: ReadonlyArray<string> = ["added", "moved", "removed", "observed", "health"]

const healthStates: ReadonlyArray<unknown> = ["ok", "degraded", "failed"]

const healthStateOf = (value: unknown): TrueHealthState | undefined =>
  healthStates.includes(value) ? (value as TrueHealthState) : undefined

/** One record a service exported, as the accuracy comparison reads it. */
export interface ExportedEvent {
  /** Which service process exported it: 0 for the first, 1 after the first restart, and so on. */
  readonly run: number
  /** When the line arrived from the process, in milliseconds since the epoch. */
  readonly arrivedAt: number
  readonly event: EventKind
  readonly uuid: string
  /** The record's `cluster`; absent when it has none. */
  readonly cluster?: string
  readonly node: string
  /** The record's `providerId`; empty when it has none. */
  readonly providerId: string
  /** The record's `index`: the GPU's index on its node; absent when the record has none. */
  readonly index?: number
  /** For `moved`: the node the inventory held the GPU on before. */
  readonly previousNode?: string
  /** For a hub's `moved` from another cluster: the cluster the GPU was in before. */
  readonly previousCluster?: string
  /** The record's `time` in milliseconds: of the reading, or for `removed` of the decision. */
  readonly time: number
  /** The record's `health.state`; absent when the record carries no health. */
  readonly health?: TrueHealthState
  /** The record's `previousHealthState` (a `health` event's state before the change). */
  readonly previousHealthState?: TrueHealthState
}

/** A record line of the `stdout` exporter read as an exported event; undefined for a line that is no record. */
export const exportedEvent = (line: string, run: number, arrivedAt: number): ExportedEvent | undefined => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }
  if (typeof value !== "object" || value === null) return undefined
  const record = value as Record<string, unknown>
  if (record.schema !== "gpu-serials/v1" || typeof record.event !== "string" || !eventKinds.includes(record.event))
    return undefined
  if (typeof record.uuid !== "string" || typeof record.node !== "string" || typeof record.time !== "string")
    return undefined
  const health =
    typeof record.health === "object" && record.health !== null
      ? healthStateOf((record.health as Record<string, unknown>).state)
      : undefined
  const previousHealthState = healthStateOf(record.previousHealthState)
  return {
    run,
    arrivedAt,
    event: record.event as EventKind,
    uuid: record.uuid,
    ...(typeof record.cluster === "string" ? { cluster: record.cluster } : {}),
    node: record.node,
    providerId: typeof record.providerId === "string" ? record.providerId : "",
    ...(typeof record.index === "number" ? { index: record.index } : {}),
    ...(typeof record.previousNode === "string" ? { previousNode: record.previousNode } : {}),
    ...(typeof record.previousCluster === "string" ? { previousCluster: record.previousCluster } : {}),
    time: Date.parse(record.time),
    ...(health === undefined ? {} : { health }),
    ...(previousHealthState === undefined ? {} : { previousHealthState }),
  }
}
