// exporterhelper/ is what every exporter shares, as the Collector's exporterhelper: a concrete exporter
// writes a Sink, and QueuedExporter gives it the buffer, batches, retries, deadline and drain.
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"

/**
 * A write to a sink failed. `retryable` says whether the same batch may succeed later (a timeout,
 * a 503, a broken connection) or never will (a 400, a closed stdout); `retryAfter` is how long the
 * sink asked to wait (HTTP 429 `Retry-After`), honoured up to the exporter's `retry.maxInterval` and
 * never past its `retry.maxElapsed`.
 */
export class SinkError extends Schema.TaggedError<SinkError>()("SinkError", {
  message: Schema.String,
  retryable: Schema.Boolean,
  retryAfter: Schema.optionalKey(Schema.Duration),
  /** The sink has already said so at ERROR, in words of its own: the queue does not say it again. */
  reported: Schema.optionalKey(Schema.Boolean),
}) {}

/**
 * What a concrete exporter implements: where a batch of inventory events goes. The queued exporter
 * around it provides the bounded buffer, batching, deadlines, retries, counters and health.
 */
export interface Sink {
  /** Writes one batch; succeeds only once the sink has accepted every event of it. */
  readonly write: (events: ReadonlyArray<InventoryEvent>) => Effect.Effect<void, SinkError>
  /** Releases what the sink holds, after the last write; run under a deadline. */
  readonly close?: Effect.Effect<void>
}
