import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
/**
 * The log of failures that retrying cannot fix (a stream NATS refuses, a permission the user lacks):
 * one ERROR line when such a failure starts or its reason changes, not one per batch while it lasts,
 * and one INFO line when writing works again.
 */
export interface NatsFailureLog {
  readonly failed: (reason: string) => Effect.Effect<void>
  readonly recovered: Effect.Effect<void>
}

export const make = (annotations: Readonly<Record<string, string>>): Effect.Effect<NatsFailureLog> =>
  Effect.map(Ref.make<string | undefined>(undefined), (current) => ({
    failed: (reason) =>
      Ref.getAndSet(current, reason).pipe(
        Effect.flatMap((previous) =>
          previous === reason
            ? Effect.void
            : Effect.logError("NATS exporter cannot write: NATS refuses it, retrying will not help").pipe(
                Effect.annotateLogs({ ...annotations, reason }),
              ),
        ),
      ),
    recovered: Ref.getAndSet(current, undefined).pipe(
      Effect.flatMap((previous) =>
        previous === undefined
          ? Effect.void
          : Effect.logInfo("NATS exporter writes again").pipe(Effect.annotateLogs({ ...annotations, was: previous })),
      ),
    ),
  }))
