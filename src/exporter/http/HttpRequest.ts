import { createHash } from "node:crypto"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import { recordJson } from "../RecordJson.ts"

/** What one POST of a batch carries, before compression. */
export interface HttpBatchRequest {
  readonly body: string
  /** Lower-case names; the configured headers come first, the exporter's own win over them. */
  readonly headers: Readonly<Record<string, string>>
}

export interface HttpRequestOptions {
  readonly format: "json" | "ndjson"
  readonly serviceVersion: string
  readonly authToken?: string
  /** Configured extra headers (secret values). */
  readonly headers: Readonly<Record<string, string>>
  readonly gzip: boolean
}

const contentTypes = { json: "application/json", ndjson: "application/x-ndjson" } as const

/**
 * The `Idempotency-Key` of a batch: SHA-256 (hex) of its record ids in order, so every attempt of one
 * batch carries the same key and a receiver can recognise a retry.
 */
export const idempotencyKey = (events: ReadonlyArray<InventoryEvent>): string =>
  createHash("sha256")
    .update(events.map((event) => event.record.id).join("\n"))
    .digest("hex")

/** The body: a JSON array of `gpu-serials/v1` records, or one record per line. */
export const batchBody = (events: ReadonlyArray<InventoryEvent>, format: "json" | "ndjson"): string => {
  const records = events.map((event) => recordJson(event.record))
  return format === "json" ? `[${records.join(",")}]` : `${records.join("\n")}\n`
}

/** The request of one write attempt of `events` at `nowMillis`. */
export const batchRequest = (
  events: ReadonlyArray<InventoryEvent>,
  nowMillis: number,
  options: HttpRequestOptions,
): HttpBatchRequest => {
  const configured = Object.fromEntries(
    Object.entries(options.headers).map(([name, value]) => [name.toLowerCase(), value]),
  )
  return {
    body: batchBody(events, options.format),
    headers: {
      ...configured,
      "content-type": contentTypes[options.format],
      ...(options.gzip ? { "content-encoding": "gzip" } : {}),
      "user-agent": `gpu-serials/${options.serviceVersion}`,
      "x-records-count": String(events.length),
      "x-timestamp": new Date(nowMillis).toISOString(),
      "idempotency-key": idempotencyKey(events),
      ...(options.authToken === undefined ? {} : { authorization: `Bearer ${options.authToken}` }),
    },
  }
}
