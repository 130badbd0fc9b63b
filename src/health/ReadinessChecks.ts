import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { Health } from "../component/Component.ts"
import { defectMessage, shortMessage } from "../log/ShortMessage.ts"

/** The answer of `/readyz`: ready only when every check passes; each check by name, `ok` or why not. */
export interface Readiness {
  readonly ready: boolean
  readonly checks: Readonly<Record<string, string>>
}

export interface ReadinessOptions {
  /** How long one check may take; one that does not answer in time counts as not ready. Default 1s. */
  readonly checkTimeout?: Duration.Input
  /**
   * Checks the service cannot be ready without (e.g. `informers`, `leader`); until a component
   * registers one of them it is reported as `not started`.
   */
  readonly expected?: ReadonlyArray<string>
}

/** The word a passing check shows in the answer; a passing check with a note shows it after, as `ok (following)`. */
export const passing = "ok"

interface Registration {
  readonly check: Effect.Effect<Health>
}

interface Answer {
  readonly passed: boolean
  readonly shown: string
}

const notStarted: Answer = { passed: false, shown: "not started" }

const defectReason = (defect: unknown): string => `check failed: ${defectMessage(defect)}`

/**
 * The named checks `/readyz` is made of. Components register theirs when they start (informers synced,
 * exporters healthy, leading or a ready follower); the registration ends with the component's scope.
 * With no check registered the service is not ready (reported under `service`).
 */
export class ReadinessChecks extends Context.Service<
  ReadinessChecks,
  {
    /** Adds a named check until the scope closes; a later registration of the same name replaces it. */
    readonly register: (name: string, check: Effect.Effect<Health>) => Effect.Effect<void, never, Scope.Scope>
    /** Runs every check at once, each under the check timeout. */
    readonly readiness: Effect.Effect<Readiness>
  }
>()("gpu-serials/health/ReadinessChecks") {
  static readonly layer = (options: ReadinessOptions = {}): Layer.Layer<ReadinessChecks> =>
    Layer.sync(ReadinessChecks, () => {
      const checkTimeout = Duration.fromInputUnsafe(options.checkTimeout ?? Duration.seconds(1))
      const expected = options.expected ?? []
      const registrations = new Map<string, Registration>()

      const register = (name: string, check: Effect.Effect<Health>): Effect.Effect<void, never, Scope.Scope> =>
        Effect.acquireRelease(
          Effect.sync(() => {
            const registration: Registration = { check }
            registrations.set(name, registration)
            return registration
          }),
          (registration) =>
            Effect.sync(() => {
              if (registrations.get(name) === registration) registrations.delete(name)
            }),
        )

      const run = (registration: Registration): Effect.Effect<Answer> =>
        Effect.suspend(() => registration.check).pipe(
          Effect.map(
            (health): Answer =>
              health.healthy
                ? {
                    passed: true,
                    shown: health.message === undefined ? passing : `${passing} (${shortMessage(health.message)})`,
                  }
                : { passed: false, shown: shortMessage(health.message ?? "not ready") },
          ),
          Effect.catchDefect((defect) => Effect.succeed({ passed: false, shown: shortMessage(defectReason(defect)) })),
          Effect.timeoutOption(checkTimeout),
          Effect.map(
            Option.getOrElse(
              (): Answer => ({ passed: false, shown: `did not answer within ${Duration.format(checkTimeout)}` }),
            ),
          ),
        )

      const readiness: Effect.Effect<Readiness> = Effect.suspend(() => {
        const names = [...new Set([...expected, ...registrations.keys()])].sort()
        return Effect.forEach(
          names,
          (name) => {
            const registration = registrations.get(name)
            return registration === undefined ? Effect.succeed(notStarted) : run(registration)
          },
          { concurrency: "unbounded" },
        ).pipe(
          Effect.map((answers): Readiness => {
            if (names.length === 0) return { ready: false, checks: { service: "no readiness checks registered" } }
            const checks: Record<string, string> = {}
            names.forEach((name, index) => {
              checks[name] = (answers[index] ?? notStarted).shown
            })
            return { ready: answers.every((answer) => answer.passed), checks }
          }),
        )
      })

      return ReadinessChecks.of({ register, readiness })
    })
}
