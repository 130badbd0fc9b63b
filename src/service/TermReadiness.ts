import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import type { Health } from "../component/Component.ts"
import { ReadinessChecks } from "../health/ReadinessChecks.ts"
import type { ObservationKind } from "../pipeline/ObservationKind.ts"

/** The roles of the readiness checks that belong to a leadership term: the receiver's two and the processor's. */
export type TermCheckName = "receiver" | "readings" | "processor"

/** The names /readyz shows for a term's checks, by what the pipeline observes: a cluster's nodes or a hub's clusters. */
export const termCheckNames = (kind: ObservationKind): Readonly<Record<TermCheckName, string>> =>
  kind === "node"
    ? { receiver: "informers", readings: "readings", processor: "inventory" }
    : { receiver: "sources", readings: "clusters", processor: "fleet" }

/** What a replica is doing: starting its first term, following, or leading with the term's checks. */
type TermPhase =
  | { readonly _tag: "Starting" }
  | { readonly _tag: "Following" }
  | { readonly _tag: "Leading"; readonly checks: Map<TermCheckName, Effect.Effect<Health>> }

const following: Health = { healthy: true, message: "following" }
const notStarted: Health = { healthy: false, message: "not started" }

/**
 * The term checks, registered once for the whole run: while leading each asks the component of the
 * current term; while following each passes as `following` (a follower is ready: it serves probes and
 * metrics and waits for the lease); before a term's component exists it is `not started`.
 */
export interface TermReadiness {
  /** A new term begins: its checks are `not started` until its components add them. */
  readonly lead: Effect.Effect<void>
  /** Adds the check of `role`, shown under the name the pipeline's kind gives it. */
  readonly add: (role: TermCheckName, check: Effect.Effect<Health>) => Effect.Effect<void>
  /** The term ended: the checks pass as `following`. */
  readonly follow: Effect.Effect<void>
}

export const make = (
  initially: "starting" | "following",
  kind: ObservationKind,
): Effect.Effect<TermReadiness, never, ReadinessChecks | Scope.Scope> =>
  Effect.gen(function* () {
    const readiness = yield* ReadinessChecks
    const phase = yield* Ref.make<TermPhase>(initially === "starting" ? { _tag: "Starting" } : { _tag: "Following" })
    const names = termCheckNames(kind)
    for (const role of ["receiver", "readings", "processor"] as const) {
      yield* readiness.register(
        names[role],
        Ref.get(phase).pipe(
          Effect.flatMap((current) => {
            if (current._tag === "Following") return Effect.succeed(following)
            if (current._tag === "Starting") return Effect.succeed(notStarted)
            return current.checks.get(role) ?? Effect.succeed(notStarted)
          }),
        ),
      )
    }
    return {
      lead: Ref.set(phase, { _tag: "Leading", checks: new Map() }),
      add: (role, check) =>
        Ref.update(
          phase,
          (current): TermPhase =>
            current._tag === "Leading"
              ? { _tag: "Leading", checks: new Map(current.checks).set(role, check) }
              : current,
        ),
      follow: Ref.set(phase, { _tag: "Following" }),
    }
  })
