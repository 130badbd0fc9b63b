import type * as Effect from "effect/Effect"
import type { Health } from "../component/Component.ts"
import type { NodeObservation } from "../domain/NodeObservation.ts"

/**
 * A running processor: it takes the receivers' observations one at a time and hands the events they
 * make to the `EventConsumer` it was created with.
 */
export interface Processor {
  /** Applies one observation; returns once its events, if any, are handed over. */
  readonly observe: (observation: NodeObservation) => Effect.Effect<void>
  /** Readiness check `inventory`. */
  readonly health: Effect.Effect<Health>
}
