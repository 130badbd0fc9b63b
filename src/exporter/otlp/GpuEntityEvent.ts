import type { AttributeValue } from "@opentelemetry/api"
import type { InstrumentationScope } from "@opentelemetry/core"
import type { Resource } from "@opentelemetry/resources"
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import { gpuDescription } from "./GpuLogAttributes.ts"
import { recordTimes } from "./GpuLogRecord.ts"
import type { EntityEventForm } from "./OtlpConfig.ts"

/** The entity type of a physical GPU; its id is its UUID (`hw.id`), never the serial, which GPUs share. */
export const gpuEntityType = "hw.gpu"

/**
 * The scopes of entity events, one object each as the serializers group by identity. The Collector reads
 * a scope carrying `otel.entity.event_as_log` as holding entity events (`pkg/experimentalmetricmetadata`).
 */
const legacyScope: InstrumentationScope & { readonly attributes: Record<string, AttributeValue> } = {
  name: "gpu-serials/entities",
  attributes: { "otel.entity.event_as_log": true },
}
const specScope: InstrumentationScope = { name: "gpu-serials/entities" }

type Attributes = Record<string, AttributeValue>

/**
 * The entities a GPU is related to, as the entity events specification writes them: the enclosure it is
 * part of (an NVL72 tray, by its chassis serial) and the Kubernetes node it is attached to (by UID).
 */
const relationships = (event: InventoryEvent): ReadonlyArray<Attributes> => [
  ...(event.record.chassis === ""
    ? []
    : [
        {
          "relationship.type": "part_of",
          "entity.type": "hw.enclosure",
          "entity.id": { "hw.id": event.record.chassis },
        },
      ]),
  ...(event.origin.nodeUid === undefined || event.origin.nodeUid === ""
    ? []
    : [
        {
          "relationship.type": "attached_to",
          "entity.type": "k8s.node",
          "entity.id": { "k8s.node.uid": event.origin.nodeUid },
        },
      ]),
]

/**
 * The entity attributes of a GPU event in one form: a state for `added`, `moved`, `observed` (and any
 * change of what describes the GPU), a delete for `removed`. `legacy` writes the Collector's
 * `otel.entity.*` attributes (the interval in milliseconds, no relationships: that form has none);
 * `spec` writes the specification's `entity.*` attributes under EventName `entity.state` or
 * `entity.delete` (the interval in seconds).
 */
const entityAttributes = (
  event: InventoryEvent,
  form: Exclude<EntityEventForm, "off">,
): { readonly eventName?: string; readonly attributes: Attributes } => {
  const id = { "hw.id": event.record.uuid }
  const deleted = event.record.event === "removed"
  const intervalMs = event.reportIntervalMs
  if (form === "legacy") {
    return {
      attributes: deleted
        ? { "otel.entity.event.type": "entity_delete", "otel.entity.type": gpuEntityType, "otel.entity.id": id }
        : {
            "otel.entity.event.type": "entity_state",
            "otel.entity.type": gpuEntityType,
            "otel.entity.id": id,
            "otel.entity.attributes": gpuDescription(event.record),
            ...(intervalMs === undefined ? {} : { "otel.entity.interval": intervalMs }),
          },
    }
  }
  if (deleted) {
    return {
      eventName: "entity.delete",
      attributes: { "entity.type": gpuEntityType, "entity.id": id, "entity.delete.reason": "removed" },
    }
  }
  const related = relationships(event)
  return {
    eventName: "entity.state",
    attributes: {
      "entity.type": gpuEntityType,
      "entity.id": id,
      "entity.description": gpuDescription(event.record),
      ...(related.length === 0 ? {} : { "entity.relationships": related }),
      ...(intervalMs === undefined ? {} : { "entity.report.interval": Math.round(intervalMs / 1000) }),
    },
  }
}

/** The OTLP log record that carries a GPU event as an entity event, in the node's Resource. */
export const gpuEntityEvent = (
  event: InventoryEvent,
  form: Exclude<EntityEventForm, "off">,
  resource: Resource,
  observedMillis: number,
): ReadableLogRecord => {
  const { eventName, attributes } = entityAttributes(event, form)
  return {
    ...recordTimes(event, observedMillis),
    ...(eventName === undefined ? {} : { eventName }),
    resource,
    instrumentationScope: form === "legacy" ? legacyScope : specScope,
    attributes,
    droppedAttributesCount: 0,
  }
}
