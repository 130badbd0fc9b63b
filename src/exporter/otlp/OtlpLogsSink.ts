import { promisify } from "node:util"
import { gzip } from "node:zlib"
import { JsonLogsSerializer, ProtobufLogsSerializer } from "@opentelemetry/otlp-transformer"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import { shortMessage } from "../../log/ShortMessage.ts"
import { type Sink, SinkError } from "../exporterhelper/Sink.ts"
import { networkFailure, statusFailure } from "./ExportFailure.ts"
import { gpuEntityEvent } from "./GpuEntityEvent.ts"
import { gpuLogRecord } from "./GpuLogRecord.ts"
import { makeNodeResources, type ServiceIdentity } from "./NodeResources.ts"
import type { EntityEventForm } from "./OtlpConfig.ts"

const gzipAsync = promisify(gzip)

export interface OtlpLogsSinkOptions {
  /** Full URL of the logs endpoint (`…/v1/logs`). */
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly protocol: "http/protobuf" | "http/json"
  readonly compression: "gzip" | "none"
  /** Deadline of one request, answer included. */
  readonly timeout: Duration.Duration
  readonly service: ServiceIdentity
  /** Whether each GPU event also goes out as an entity event, and in which form. */
  readonly entityEvents: EntityEventForm
}

const encodings = {
  "http/protobuf": { serializer: ProtobufLogsSerializer, contentType: "application/x-protobuf" },
  "http/json": { serializer: JsonLogsSerializer, contentType: "application/json" },
} as const

/** Bytes of an answer read at most, for the partial-success message; an OTLP answer is small. */
const maxAnswerBytes = 64 * 1024

/**
 * Sends each batch as one OTLP/HTTP logs request: one log record per GPU event, and with entity events on
 * one entity event more (see `GpuEntityEvent`), grouped into one ResourceLogs per node. Throttling, 502/503/504 and network errors fail as retryable (with the
 * receiver's `Retry-After`), every other refusal as permanent.
 */
export const make = (options: OtlpLogsSinkOptions): Sink => {
  const { serializer, contentType } = encodings[options.protocol]
  const nodeResources = makeNodeResources(options.service)
  const headers: Record<string, string> = {
    ...options.headers,
    "content-type": contentType,
    ...(options.compression === "gzip" ? { "content-encoding": "gzip" } : {}),
  }

  const encode = (events: ReadonlyArray<InventoryEvent>, observedMillis: number) =>
    Effect.gen(function* () {
      const form = options.entityEvents
      const records = events.flatMap((event) => {
        const resource = nodeResources.of(event)
        const record = gpuLogRecord(event, resource, observedMillis)
        return form === "off" ? [record] : [record, gpuEntityEvent(event, form, resource, observedMillis)]
      })
      const body = serializer.serializeRequest(records)
      if (body === undefined) {
        return yield* new SinkError({ message: "OTLP logs request could not be encoded", retryable: false })
      }
      if (options.compression === "none") return body
      return yield* Effect.tryPromise({
        try: () => gzipAsync(body),
        catch: (cause) =>
          new SinkError({ message: `OTLP logs request could not be compressed: ${String(cause)}`, retryable: false }),
      })
    })

  const post = (body: Uint8Array) =>
    Effect.tryPromise({
      try: async (signal) => {
        const response = await fetch(options.url, { method: "POST", headers, body, signal })
        const answer = new Uint8Array(await response.arrayBuffer()).subarray(0, maxAnswerBytes)
        return { status: response.status, retryAfter: response.headers.get("retry-after"), answer }
      },
      catch: networkFailure,
    }).pipe(
      Effect.timeout(options.timeout),
      Effect.catchTag("TimeoutError", () =>
        Effect.fail(
          new SinkError({
            message: `OTLP request timed out after ${Duration.format(options.timeout)}`,
            retryable: true,
          }),
        ),
      ),
    )

  /** Records the receiver accepted the request but refused, as its partial-success answer says. */
  const rejectedRecords = (answer: Uint8Array): { readonly count: number; readonly reason: string } => {
    if (answer.length === 0) return { count: 0, reason: "" }
    try {
      const partial = serializer.deserializeResponse(answer).partialSuccess
      return { count: Number(partial?.rejectedLogRecords ?? 0), reason: partial?.errorMessage ?? "" }
    } catch {
      // An answer that is not OTLP (a proxy's page) says nothing about partial success.
      return { count: 0, reason: "" }
    }
  }

  const write = (events: ReadonlyArray<InventoryEvent>): Effect.Effect<void, SinkError> =>
    Effect.gen(function* () {
      const body = yield* encode(events, yield* Clock.currentTimeMillis)
      const answer = yield* post(body)
      if (answer.status < 200 || answer.status > 299) {
        return yield* statusFailure(answer.status, answer.retryAfter, yield* Clock.currentTimeMillis)
      }
      const rejected = rejectedRecords(answer.answer)
      if (rejected.count > 0) {
        yield* Effect.logWarning("OTLP receiver rejected some log records").pipe(
          Effect.annotateLogs({ rejected: rejected.count, reason: shortMessage(rejected.reason) }),
        )
      }
    })

  return { write }
}
