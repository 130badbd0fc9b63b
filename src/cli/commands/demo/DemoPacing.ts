import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

/** Short enough that churn shows `removed` events within a demo's run. */
export const demoRemovalGrace = "10s"
export const progressInterval = "5 seconds"
/** A demo's sink that cannot be reached holds its end only this long. */
export const demoShutdownTimeout = "5s"
/** With health faults, nodes are read this often, so a GPU's health change shows within a demo's run. */
export const demoHealthResync = "5s"

/** Until `url` answers at all (the health server listens), asking every 100 ms for at most 30 s. */
export const untilAnswering = (url: string): Effect.Effect<void> =>
  Effect.tryPromise((signal) => fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(1_000)]) })).pipe(
    Effect.flatMap((answer) => Effect.promise(() => answer.body?.cancel() ?? Promise.resolve())),
    Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo({ times: 300 }))),
    Effect.ignore,
  )
