import type * as Effect from "effect/Effect"
import type { Health } from "../component/Component.ts"
import type { NodeObservation } from "../domain/NodeObservation.ts"

/**
 * A running processor: it takes the receivers' observations one at a time and hands the events they
 * make to the `EventConsumer` it was created with. A cluster's processor takes node observations, a
 * hub's cluster observations (`ObservationKind`).
 */
export interface Processor<Observation = NodeObservation> {
  /**
   * Applies one observation; returns once its events, if any, are handed over. A method, so that the
   * service can hold a processor of any observation kind where its receiver's kind was checked to match.
   */
  observe(observation: Observation): Effect.Effect<void>
  /** Readiness check `inventory` of a cluster, `fleet` of a hub. */
  readonly health: Effect.Effect<Health>
}
