import { headers, type MsgHdrs } from "@nats-io/transport-node"
import { recordSchema } from "../../domain/GpuRecord.ts"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import { recordJson } from "../RecordJson.ts"
import { eventSubject } from "./NatsSubject.ts"

/** Header naming the payload's record schema. */
export const schemaHeader = "Gpu-Serials-Schema"

/** JetStream's duplicate-suppression header; the record id, so one event is stored once. */
export const messageIdHeader = "Nats-Msg-Id"

export const contentType = "application/json"

const encoder = new TextEncoder()

/** One NATS message of an inventory event. */
export interface NatsMessage {
  readonly subject: string
  readonly headers: MsgHdrs
  readonly payload: Uint8Array
  /** The record id, also in `Nats-Msg-Id`. */
  readonly id: string
}

/**
 * An event as the message the exporter publishes: its subject, the `gpu-serials/v1` JSON record
 * as payload, and headers `Nats-Msg-Id` (the deterministic record id), `Gpu-Serials-Schema` and
 * `Content-Type`.
 */
export const natsMessage = (prefix: string, event: InventoryEvent): NatsMessage => {
  const { record } = event
  const messageHeaders = headers()
  messageHeaders.set(messageIdHeader, record.id)
  messageHeaders.set(schemaHeader, recordSchema)
  messageHeaders.set("Content-Type", contentType)
  return {
    subject: eventSubject(prefix, record),
    headers: messageHeaders,
    payload: encoder.encode(recordJson(record)),
    id: record.id,
  }
}
