import type * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import type * as Queue from "effect/Queue"
import type { Health } from "../component/Component.ts"
import type { NodeObservation } from "../domain/NodeObservation.ts"

/**
 * A running receiver: what it observes, in order, and whether it works. A cluster's receiver observes
 * nodes (`NodeObservation`); a hub's observes clusters (`ClusterObservation`); see `ObservationKind`.
 */
export interface Receiver<Observation = NodeObservation> {
  /**
   * What the receiver observed, for the pipeline's processor. Bounded: when the consumer falls behind,
   * producers wait, so nothing is dropped. Taking fails with `Done` once the receiver has stopped.
   */
  readonly observations: Queue.Dequeue<Observation, Cause.Done>
  /** Whether the receiver can see what it watches (readiness check `informers` of a cluster, `sources` of a hub). */
  readonly health: Effect.Effect<Health>
  /** Whether what it reads succeeds (readiness check `readings` of a cluster, `clusters` of a hub). */
  readonly readings: Effect.Effect<Health>
}
