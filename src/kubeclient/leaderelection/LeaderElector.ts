import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import { closingBudget, ShutdownDeadline } from "../../component/ShutdownDeadline.ts"
import type { Elector, LeadershipTerm, LeaseSettings } from "../../pipeline/Leadership.ts"
import type { KubeApiError } from "../rest/KubeApiError.ts"
import { decide, type LeaderElectionRecord, type ObservedRecord, releasedRecord } from "./LeaderElectionRecord.ts"
import type { LeaseLock, StoredLease } from "./LeaseLock.ts"

/** client-go waits RetryPeriod × (1 + up to 1.2) between attempts to acquire, so followers do not move in step. */
const acquireJitterFactor = 1.2

type Attempt =
  | { readonly _tag: "Holding"; readonly record: LeaderElectionRecord; readonly atMs: number }
  | { readonly _tag: "Held"; readonly holder: string }
  /** `answered`: the API server answered (an HTTP error), rather than the attempt running out of time. */
  | { readonly _tag: "Failed"; readonly reason: string; readonly answered: boolean }

interface ElectorState {
  /** What this replica last observed of the lease, by its own clock. */
  readonly observed: ObservedRecord | undefined
  /** The lease as last read or written, for the update that releases it. */
  readonly lease: StoredLease | undefined
}

/**
 * client-go's `LeaderElector` over a `LeaseLock`: acquires the lease (retrying every retry period with
 * jitter), renews it every retry period while a term lasts, and ends the term when no renewal succeeded
 * within the renew deadline since the last one, by this replica's clock. Closing a term that was not
 * lost releases the lease. Each call's deadline is the time left before the renew deadline.
 */
export const make = (lock: LeaseLock, settings: LeaseSettings): Effect.Effect<Elector> =>
  Effect.gen(function* () {
    const state = yield* Ref.make<ElectorState>({ observed: undefined, lease: undefined })
    const leaseDurationSeconds = Math.max(1, Math.ceil(settings.leaseDurationMs / 1000))
    const lease = { lease: lock.describe, identity: settings.identity }

    /** One `tryAcquireOrRenew`, finished by `deadlineMs` (this replica's clock). */
    const attempt = (deadlineMs: number): Effect.Effect<Attempt> =>
      Clock.currentTimeMillis.pipe(Effect.flatMap((nowMs) => tryAcquireOrRenew(nowMs, deadlineMs)))

    const tryAcquireOrRenew = (nowMs: number, deadlineMs: number): Effect.Effect<Attempt> =>
      Effect.gen(function* () {
        const left = () =>
          Clock.currentTimeMillis.pipe(Effect.map((at) => Duration.millis(Math.max(1, deadlineMs - at))))
        const read = yield* lock.get(yield* left())
        const before = yield* Ref.get(state)
        const { decision, observed } = decide({
          identity: settings.identity,
          leaseDurationSeconds,
          nowMs,
          observed: before.observed,
          current: read?.record,
        })
        yield* Ref.set(state, { observed, lease: read })
        if (decision._tag === "Held") return { _tag: "Held", holder: decision.holder } satisfies Attempt
        const written =
          decision._tag === "Create" || read === undefined
            ? yield* lock.create(decision.record, yield* left())
            : yield* lock.update(read, decision.record, yield* left())
        yield* Ref.set(state, { observed: { record: decision.record, atMs: nowMs }, lease: written })
        return { _tag: "Holding", record: decision.record, atMs: nowMs } satisfies Attempt
      }).pipe(
        Effect.catch((error: KubeApiError) =>
          Effect.succeed<Attempt>({ _tag: "Failed", reason: error.message, answered: error.kind !== "timeout" }),
        ),
        Effect.timeoutOrElse({
          duration: Duration.millis(Math.max(1, deadlineMs - nowMs)),
          orElse: () =>
            Effect.succeed<Attempt>({ _tag: "Failed", reason: "no answer before the renew deadline", answered: false }),
        }),
      )

    const acquire = Effect.gen(function* () {
      while (true) {
        const nowMs = yield* Clock.currentTimeMillis
        const outcome = yield* attempt(nowMs + settings.renewDeadlineMs)
        if (outcome._tag === "Holding") return outcome
        if (outcome._tag === "Failed") {
          yield* Effect.logDebug("cannot acquire the lease").pipe(
            Effect.annotateLogs({ ...lease, reason: outcome.reason }),
          )
        }
        const jitter = (yield* Random.next) * acquireJitterFactor
        yield* Effect.sleep(Duration.millis(settings.retryPeriodMs * (1 + jitter)))
      }
    })

    /** Renews every retry period; returns the reason once no renewal succeeded within the renew deadline. */
    const renew = (acquiredAtMs: number): Effect.Effect<string> =>
      Effect.gen(function* () {
        let lastRenewalMs = acquiredAtMs
        let lastFailure = "no renewal succeeded"
        // The last try before the deadline has only what time is left, so it often ends unanswered; an
        // answer the server gave earlier in the same window (HTTP 503, 403…) says more about why.
        let answeredFailure: string | undefined
        while (true) {
          yield* Effect.sleep(Duration.millis(settings.retryPeriodMs))
          while (true) {
            const deadlineMs = lastRenewalMs + settings.renewDeadlineMs
            const nowMs = yield* Clock.currentTimeMillis
            if (nowMs >= deadlineMs) {
              return `could not renew the lease within ${Duration.format(Duration.millis(settings.renewDeadlineMs))}: ${answeredFailure ?? lastFailure}`
            }
            const outcome = yield* attempt(deadlineMs)
            if (outcome._tag === "Holding") {
              lastRenewalMs = outcome.atMs
              answeredFailure = undefined
              break
            }
            if (outcome._tag === "Held") return `the lease is held by ${outcome.holder}`
            lastFailure = outcome.reason
            if (outcome.answered) answeredFailure = outcome.reason
            yield* Effect.logDebug("cannot renew the lease").pipe(
              Effect.annotateLogs({ ...lease, reason: outcome.reason }),
            )
            const afterMs = yield* Clock.currentTimeMillis
            yield* Effect.sleep(Duration.millis(Math.max(0, Math.min(settings.retryPeriodMs, deadlineMs - afterMs))))
          }
        }
      })

    /** client-go's ReleaseOnCancel: write a free lease if this replica still holds it. */
    const release = Effect.gen(function* () {
      const deadline = yield* Effect.serviceOption(ShutdownDeadline)
      const timeout = yield* closingBudget(deadline, Duration.millis(settings.renewDeadlineMs))
      const released = Effect.gen(function* () {
        const read = yield* lock.get(timeout)
        if (read === undefined || read.record.holderIdentity !== settings.identity) return false
        const nowMs = yield* Clock.currentTimeMillis
        const record = releasedRecord(read.record, nowMs)
        const written = yield* lock.update(read, record, timeout)
        yield* Ref.set(state, { observed: { record, atMs: nowMs }, lease: written })
        return true
      })
      yield* released.pipe(
        Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.succeed(false) }),
        Effect.matchEffect({
          onSuccess: (done) =>
            done ? Effect.logInfo("leadership released").pipe(Effect.annotateLogs(lease)) : Effect.void,
          onFailure: (error) =>
            Effect.logWarning("could not release the lease; it expires by itself").pipe(
              Effect.annotateLogs({ ...lease, reason: error.message }),
            ),
        }),
      )
    })

    const lead: Effect.Effect<LeadershipTerm, never, Scope.Scope> = Effect.gen(function* () {
      const acquired = yield* acquire
      yield* Effect.logInfo("leadership acquired").pipe(
        Effect.annotateLogs({ ...lease, leaseTransitions: acquired.record.leaseTransitions }),
      )
      const lost = yield* Deferred.make<string>()
      // Registered before the renewals start, so it runs after they stop.
      yield* Effect.addFinalizer(() =>
        Deferred.isDone(lost).pipe(Effect.flatMap((wasLost) => (wasLost ? Effect.void : release))),
      )
      yield* renew(acquired.atMs).pipe(
        Effect.tap((reason) => Effect.logWarning("leadership lost").pipe(Effect.annotateLogs({ ...lease, reason }))),
        Effect.flatMap((reason) => Deferred.succeed(lost, reason)),
        Effect.forkScoped,
      )
      return { lost: Deferred.await(lost) }
    })

    const holder = Ref.get(state).pipe(
      Effect.map(({ observed }) => {
        const identity = observed?.record.holderIdentity ?? ""
        return identity === "" ? undefined : identity
      }),
    )
    return { identity: settings.identity, lead, holder }
  })
