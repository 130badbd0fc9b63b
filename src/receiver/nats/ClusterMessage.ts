import { heartbeatSchema } from "../../domain/ClusterHeartbeat.ts"
import { type GpuRecord, recordSchema } from "../../domain/GpuRecord.ts"

/** One message of the hub stream as the hub reads it: a cluster's record, its heartbeat, or neither. */
export type ClusterMessage =
  | { readonly _tag: "Record"; readonly record: GpuRecord }
  | { readonly _tag: "Heartbeat"; readonly cluster: string; readonly sentAt: Date }
  | { readonly _tag: "Unreadable"; readonly reason: string }

const isText = (value: unknown): value is string => typeof value === "string"

/** Reads a message body: a `gpu-serials/v1` record or a heartbeat, with the fields the hub relies on. */
export const readClusterMessage = (body: string): ClusterMessage => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return { _tag: "Unreadable", reason: "not JSON" }
  }
  if (typeof parsed !== "object" || parsed === null) return { _tag: "Unreadable", reason: "not a JSON object" }
  const fields = parsed as Record<string, unknown>
  if (fields.schema === heartbeatSchema) {
    const sentAt = isText(fields.time) ? new Date(fields.time) : undefined
    return isText(fields.cluster) && sentAt !== undefined && Number.isFinite(sentAt.getTime())
      ? { _tag: "Heartbeat", cluster: fields.cluster, sentAt }
      : { _tag: "Unreadable", reason: "a heartbeat without cluster or time" }
  }
  if (fields.schema !== recordSchema) return { _tag: "Unreadable", reason: "neither a record nor a heartbeat" }
  const required = ["event", "id", "cluster", "node", "machine", "uuid", "time"] as const
  const missing = required.find((field) => !isText(fields[field]))
  if (missing !== undefined || !Number.isFinite(Date.parse(fields.time as string))) {
    return { _tag: "Unreadable", reason: `a record without ${missing ?? "a valid time"}` }
  }
  return { _tag: "Record", record: parsed as GpuRecord }
}
