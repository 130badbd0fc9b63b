import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import type { NodeObservation } from "../../domain/NodeObservation.ts"

/** What became of an observation handed over. */
export type HandOffOutcome = "handed" | "stale" | "timed-out"

const handed: Effect.Effect<HandOffOutcome> = Effect.succeed("handed")
const stale: Effect.Effect<HandOffOutcome> = Effect.succeed("stale")

export interface HandOffOptions {
  /** Waits for room until this Clock time at most; without one it waits as long as it takes. */
  readonly deadlineMillis?: number
  /**
   * Checked just before the observation is queued, in the same order as every other hand-off: `false`
   * drops it as stale (a reading of a pod whose deletion was already handed over must not follow it).
   */
  readonly stillCurrent?: () => boolean
}

/** Where the receiver's observations leave it, in order, for one consumer. */
export interface ObservationOutlet {
  /** Bounded; taking fails with `Done` once the outlet's scope closed. */
  readonly observations: Queue.Dequeue<NodeObservation, Cause.Done>
  readonly handOff: (observation: NodeObservation, options?: HandOffOptions) => Effect.Effect<HandOffOutcome>
}

/**
 * A bounded queue of observations with backpressure: producers wait for room, nothing is dropped for
 * being late unless the producer set a deadline. Hand-offs are serialised, so a check of `stillCurrent`
 * and the queueing that follows it are never overtaken by another producer. While the queue has room and
 * no producer waits, a hand-off is checked and queued at once, in one step nothing can interleave with:
 * no permit, no deadline timer.
 */
export const make = (capacity: number): Effect.Effect<ObservationOutlet, never, Scope.Scope> =>
  Effect.gen(function* () {
    const observations = yield* Queue.bounded<NodeObservation, Cause.Done>(capacity)
    yield* Effect.addFinalizer(() => Queue.end(observations))
    const order = yield* Semaphore.make(1)
    /** Hand-offs on the waiting path not yet finished: while there are any, later ones queue behind them. */
    let waiting = 0

    const queueIt = (observation: NodeObservation, options: HandOffOptions): Effect.Effect<HandOffOutcome> =>
      Effect.suspend(() => {
        if (options.stillCurrent !== undefined && !options.stillCurrent()) {
          return stale
        }
        if (Queue.offerUnsafe(observations, observation)) {
          return handed
        }
        return Queue.offer(observations, observation).pipe(Effect.as("handed" as const))
      })

    const waitForTurn = (observation: NodeObservation, options: HandOffOptions): Effect.Effect<HandOffOutcome> => {
      const ordered = Semaphore.withPermit(order)(queueIt(observation, options))
      const deadline = options.deadlineMillis
      if (deadline === undefined) {
        return ordered
      }
      return Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) =>
          ordered.pipe(
            Effect.timeoutOption(Duration.millis(Math.max(1, deadline - now))),
            Effect.map((outcome) => Option.getOrElse(outcome, () => "timed-out" as const)),
          ),
        ),
      )
    }

    const handOff = (observation: NodeObservation, options: HandOffOptions = {}): Effect.Effect<HandOffOutcome> =>
      Effect.suspend(() => {
        // Checked and queued here, in this one synchronous step: a later hand-off cannot come in between.
        if (waiting === 0 && !Queue.isFullUnsafe(observations)) {
          if (options.stillCurrent !== undefined && !options.stillCurrent()) return stale
          // Refused with room left: the queue has ended, and offering waits for nothing.
          return Queue.offerUnsafe(observations, observation)
            ? handed
            : Queue.offer(observations, observation).pipe(Effect.as("handed" as const))
        }
        return Effect.acquireUseRelease(
          Effect.sync(() => {
            waiting++
          }),
          () => waitForTurn(observation, options),
          () =>
            Effect.sync(() => {
              waiting--
            }),
        )
      })

    return { observations, handOff }
  })
