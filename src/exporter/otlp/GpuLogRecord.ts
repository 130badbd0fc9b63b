import { type HrTime, SeverityNumber } from "@opentelemetry/api"
import type { InstrumentationScope } from "@opentelemetry/core"
import type { Resource } from "@opentelemetry/resources"
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs"
import type { GpuRecord } from "../../domain/GpuRecord.ts"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import type { InventoryEventKind } from "../../domain/InventoryEventKind.ts"
import { gpuLogAttributes } from "./GpuLogAttributes.ts"

/** `EventName` of a GPU event's log record. */
export const gpuEventName = (kind: InventoryEventKind): string => `gpu.inventory.${kind}`

const warn = { number: SeverityNumber.WARN, text: "WARN" } as const
const info = { number: SeverityNumber.INFO, text: "INFO" } as const

/**
 * A GPU leaving a node (`moved`, `removed`) or turning degraded or failed is worth a look; one back to
 * ok, and the rest, is routine.
 */
const severityOf = (record: GpuRecord): { readonly number: SeverityNumber; readonly text: string } => {
  if (record.event === "health") return record.health?.state === "ok" ? info : warn
  return record.event === "moved" || record.event === "removed" ? warn : info
}

/**
 * The readable line a log viewer shows: `GPU <serial> (<uuid>) added on <node>`, or for a health change
 * `GPU <serial> (<uuid>) health degraded (row-remap-pending) on <node>`.
 */
export const gpuEventBody = (event: InventoryEvent): string => {
  const { record } = event
  const gpu = record.gpu === "" ? `GPU ${record.uuid}` : `GPU ${record.gpu} (${record.uuid})`
  switch (record.event) {
    case "moved":
      return `${gpu} moved from ${record.previousNode ?? "an unknown node"} to ${record.node}`
    case "removed":
      return `${gpu} removed from ${record.node}`
    case "health": {
      if (record.health === undefined) return `${gpu} health changed on ${record.node}`
      const reasons = record.health.reasons.length === 0 ? "" : ` (${record.health.reasons.join(", ")})`
      return `${gpu} health ${record.health.state}${reasons} on ${record.node}`
    }
    default:
      return `${gpu} ${record.event} on ${record.node}`
  }
}

const hrTimeOfMillis = (millis: number): HrTime => {
  const seconds = Math.floor(millis / 1000)
  return [seconds, Math.round((millis - seconds * 1000) * 1_000_000)]
}

/** The times of a GPU event's log record: the reading's time, and `observedMillis` when the exporter took it. */
export const recordTimes = (
  event: InventoryEvent,
  observedMillis: number,
): Pick<ReadableLogRecord, "hrTime" | "hrTimeObserved"> => {
  const readingMillis = Date.parse(event.record.time)
  return {
    hrTime: hrTimeOfMillis(Number.isNaN(readingMillis) ? observedMillis : readingMillis),
    hrTimeObserved: hrTimeOfMillis(observedMillis),
  }
}

/** The instrumentation scope of every GPU log record; one object, as the serializers group by identity. */
export const gpuInventoryScope: InstrumentationScope = { name: "gpu-serials/inventory" }

/**
 * One OTLP log record of one GPU event, built field by field as the serializers read them (an SDK
 * record's fields are getters, so copying one by spreading would lose them). The record time is the
 * reading's time; `observedMillis` is when the exporter took it.
 */
export const gpuLogRecord = (event: InventoryEvent, resource: Resource, observedMillis: number): ReadableLogRecord => {
  const severity = severityOf(event.record)
  return {
    ...recordTimes(event, observedMillis),
    severityNumber: severity.number,
    severityText: severity.text,
    body: gpuEventBody(event),
    eventName: gpuEventName(event.record.event),
    resource,
    instrumentationScope: gpuInventoryScope,
    attributes: gpuLogAttributes(event),
    droppedAttributesCount: 0,
  }
}
