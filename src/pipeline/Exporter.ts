import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type { ComponentFactory, Health } from "../component/Component.ts"
import type { InventoryEvent } from "../domain/InventoryEvent.ts"

/**
 * A running exporter. `export` only hands events over: it never waits for the sink, so a slow or
 * dead sink slows only itself. What does not fit the exporter's bounded buffer is dropped and
 * counted. Closing the scope it was created in flushes what it holds (within its deadline) and stops it.
 */
export interface Exporter {
  readonly id: string
  readonly export: (events: ReadonlyArray<InventoryEvent>) => Effect.Effect<void>
  /** Waits until everything handed over so far has been written or given up, at most `timeout`. */
  readonly flush: (timeout: Duration.Input) => Effect.Effect<void>
  readonly health: Effect.Effect<Health>
  readonly stats: Effect.Effect<ExporterStats>
  /** Records its buffer holds at most (`queued` up to it); absent when it has no bound. */
  readonly capacity?: number
}

/** Counters since start, in records (one record per GPU event). */
export interface ExporterStats {
  /** Written to the sink and acknowledged. */
  readonly sent: number
  /** Write attempts that failed (each may be retried). */
  readonly failed: number
  /** Write attempts that were retried. */
  readonly retried: number
  /** Given up: buffer full, retries exhausted, or rejected as permanent. */
  readonly dropped: number
  /** Waiting in the buffer now. */
  readonly queued: number
}

export type ExporterFactory<Config = unknown> = ComponentFactory<"exporter", Config, Exporter>
