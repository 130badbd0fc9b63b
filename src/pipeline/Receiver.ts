import type * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import type * as Queue from "effect/Queue"
import type { Health } from "../component/Component.ts"
import type { NodeObservation } from "../domain/NodeObservation.ts"

/** A running receiver: what it observes, in order, and whether it works. */
export interface Receiver {
  /**
   * What the receiver observed, for the pipeline's processor. Bounded: when the consumer falls behind,
   * producers wait, so nothing is dropped. Taking fails with `Done` once the receiver has stopped.
   */
  readonly observations: Queue.Dequeue<NodeObservation, Cause.Done>
  /** Whether the receiver can see what it watches (readiness check `informers`). */
  readonly health: Effect.Effect<Health>
  /** Whether its readings succeed (readiness check `readings`). */
  readonly readings: Effect.Effect<Health>
}
