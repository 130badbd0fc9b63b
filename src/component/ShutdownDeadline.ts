import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
/**
 * The service's deadline for stopping, as a Collector component's `Shutdown(ctx)` finds one in its
 * context: it starts at the first SIGTERM or SIGINT (`begin`), and every component waits, while it
 * closes, at most the time left, so the process exits before Kubernetes' grace period ends.
 */
export class ShutdownDeadline extends Context.Service<
  ShutdownDeadline,
  {
    /** The whole time from the first signal to exit (`SHUTDOWN_TIMEOUT`). */
    readonly budget: Duration.Duration
    /** Starts the countdown; later calls keep the first start. */
    readonly begin: Effect.Effect<void>
    /** Whether the service is stopping (`begin` was called), as opposed to a term ending on its own. */
    readonly begun: Effect.Effect<boolean>
    /** Time left for writing what is held: the remaining time less what closing connections keeps. */
    readonly forFlushing: Effect.Effect<Duration.Duration>
    /** Time left before the process must have stopped; the whole budget before `begin`. */
    readonly remaining: Effect.Effect<Duration.Duration>
  }
>()("gpu-serials/component/ShutdownDeadline") {
  static readonly make = (budget: Duration.Input): Effect.Effect<ShutdownDeadline["Service"]> =>
    Effect.gen(function* () {
      const total = Duration.fromInputUnsafe(budget)
      // Connections (NATS drain, HTTP agents, the health server) close in the last tenth, at most a second.
      const closingReserve = Duration.min(Duration.seconds(1), Duration.divideUnsafe(total, 10))
      const startedAt = yield* Ref.make<number | undefined>(undefined)
      const begin = Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => Ref.update(startedAt, (first) => first ?? now)),
      )
      const remaining = Effect.gen(function* () {
        const started = yield* Ref.get(startedAt)
        if (started === undefined) return total
        const elapsed = (yield* Clock.currentTimeMillis) - started
        return Duration.millis(Math.max(0, Duration.toMillis(total) - elapsed))
      })
      const forFlushing = remaining.pipe(
        Effect.map((left) => Duration.millis(Math.max(0, Duration.toMillis(left) - Duration.toMillis(closingReserve)))),
      )
      const begun = Ref.get(startedAt).pipe(Effect.map((started) => started !== undefined))
      return ShutdownDeadline.of({ budget: total, begin, begun, forFlushing, remaining })
    })

  static readonly layer = (budget: Duration.Input): Layer.Layer<ShutdownDeadline> =>
    Layer.effect(ShutdownDeadline, ShutdownDeadline.make(budget))
}

/**
 * How long a closing component may wait for `wanted`: that long, or less when the service's shutdown
 * deadline (looked up when the component started) leaves less.
 */
export const closingBudget = (
  deadline: Option.Option<ShutdownDeadline["Service"]>,
  wanted: Duration.Input,
  phase: "flushing" | "closing" = "closing",
): Effect.Effect<Duration.Duration> => {
  const want = Duration.fromInputUnsafe(wanted)
  if (Option.isNone(deadline)) return Effect.succeed(want)
  const left = phase === "flushing" ? deadline.value.forFlushing : deadline.value.remaining
  return left.pipe(Effect.map((time) => Duration.min(time, want)))
}
