import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { ShutdownDeadline } from "../component/ShutdownDeadline.ts"

/** The service stopping: begun once, by whichever part hears of it first (the signal's interruption). */
export interface ServiceShutdown {
  /** Starts the shutdown deadline and says so in one line; later calls do nothing. */
  readonly begin: Effect.Effect<void>
  /** Time left for writing what is held (see `ShutdownDeadline.forFlushing`). */
  readonly forFlushing: Effect.Effect<Duration.Duration>
}

export const make: Effect.Effect<ServiceShutdown, never, ShutdownDeadline> = Effect.gen(function* () {
  const deadline = yield* ShutdownDeadline
  const begun = yield* Ref.make(false)
  const begin = Effect.gen(function* () {
    if (yield* Ref.getAndSet(begun, true)) return
    yield* deadline.begin
    yield* Effect.logInfo("gpu-serials shutting down").pipe(
      Effect.annotateLogs({ shutdownTimeout: Duration.format(deadline.budget) }),
    )
  })
  return { begin, forFlushing: deadline.forFlushing }
})
