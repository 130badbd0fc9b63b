import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { Health } from "../../component/Component.ts"
import { closingBudget, ShutdownDeadline } from "../../component/ShutdownDeadline.ts"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import { defectMessage, shortMessage } from "../../log/ShortMessage.ts"
import { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import type { Exporter, ExporterStats } from "../../pipeline/Exporter.ts"
import type { QueueSettings } from "./QueueSettings.ts"
import { nextRetry } from "./RetryPolicy.ts"
import { type Sink, SinkError } from "./Sink.ts"

export interface QueuedExporterOptions {
  /** The exporter id from the config (`stdout`, `nats/archive`); annotates every log line. */
  readonly id: string
  readonly sink: Sink
  readonly settings: QueueSettings
  /**
   * How long closing the scope waits for held records to be written before dropping them; default 5s,
   * less when the service's shutdown deadline leaves less.
   */
  readonly shutdownTimeout?: Duration.Input
}

/** A batch being retried: why its last attempt failed and when its first one started. */
interface Retrying {
  readonly reason: string
  readonly sinceMillis: number
}

/** What the exporter has done with the records handed to it, since start. */
interface Ledger {
  /** Records admitted into the buffer. */
  readonly accepted: number
  /** Admitted records written or given up. `accepted - settled` are held now. */
  readonly settled: number
  readonly sent: number
  readonly failed: number
  readonly retried: number
  readonly dropped: number
  /** Reason of the last write when it failed; absent after a success. */
  readonly lastFailure: string | undefined
  /** The batch now waiting for its next attempt, if any. */
  readonly retrying: Retrying | undefined
  /** Records dropped because the buffer is full, since it last had room. */
  readonly overflowDropped: number
  readonly closed: boolean
}

const emptyLedger: Ledger = {
  accepted: 0,
  settled: 0,
  sent: 0,
  failed: 0,
  retried: 0,
  dropped: 0,
  lastFailure: undefined,
  retrying: undefined,
  overflowDropped: 0,
  closed: false,
}

interface Admission {
  readonly admitted: number
  readonly rejected: number
  /** The buffer was full for the first time since it last had room. */
  readonly overflowStarted: boolean
  /** The buffer has room again; records dropped while it had none. */
  readonly overflowEnded: number | undefined
}

const admit = (ledger: Ledger, offered: number, queueSize: number): readonly [Admission, Ledger] => {
  const room = ledger.closed ? 0 : Math.max(0, queueSize - (ledger.accepted - ledger.settled))
  const admitted = Math.min(room, offered)
  const rejected = offered - admitted
  const overflowing = ledger.overflowDropped > 0
  const countsAsOverflow = rejected > 0 && !ledger.closed
  return [
    {
      admitted,
      rejected,
      overflowStarted: countsAsOverflow && !overflowing,
      overflowEnded: rejected === 0 && overflowing ? ledger.overflowDropped : undefined,
    },
    {
      ...ledger,
      accepted: ledger.accepted + admitted,
      dropped: ledger.dropped + rejected,
      overflowDropped: countsAsOverflow ? ledger.overflowDropped + rejected : 0,
    },
  ]
}

/** A duration in whole seconds, as health reasons and log lines show it. */
const wholeSeconds = (millis: number): string => {
  const seconds = Math.round(millis / 1000)
  return seconds === 0 ? "0s" : Duration.format(Duration.seconds(seconds))
}

/**
 * Turns a `Sink` into an `Exporter`, as the Collector's exporterhelper does: a bounded buffer of
 * `queueSize` records (what does not fit is dropped and counted, `export` never waits), a fiber that
 * writes batches of up to `batchSize` under `writeTimeout`, retries of retryable failures with
 * randomized exponential backoff bounded by `retry.maxElapsed` (see `nextRetry`), and one log line
 * when a batch starts being retried, one per batch given up and one when writes succeed again after
 * a failure. While a batch is being retried, health says why and for how long. Closing the scope
 * stops accepting records, cuts a retry backoff under way short, writes what is held within
 * `shutdownTimeout`, drops and reports the rest, then closes the sink.
 */
export const make = Effect.fnUntraced(function* (
  options: QueuedExporterOptions,
): Effect.fn.Return<Exporter, never, Scope.Scope> {
  const { id, sink, settings } = options
  const shutdownTimeout = options.shutdownTimeout ?? Duration.seconds(5)
  const ledger = yield* SubscriptionRef.make(emptyLedger)
  const closing = yield* Deferred.make<void>()
  const buffer = yield* Queue.dropping<InventoryEvent>(settings.queueSize)
  const annotate = Effect.annotateLogs({ exporter: id })
  const metrics = yield* Effect.serviceOption(ServiceMetrics)
  const deadline = yield* Effect.serviceOption(ShutdownDeadline)
  /** Reports each write attempt's duration and outcome to the service metrics, when the service has them. */
  const measured = <A, E>(write: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Option.isNone(metrics)
      ? write
      : Effect.flatMap(Clock.currentTimeMillis, (start) =>
          write.pipe(
            Effect.onExit((exit) =>
              Effect.flatMap(Clock.currentTimeMillis, (end) =>
                metrics.value.exportWritten(id, (end - start) / 1000, Exit.isSuccess(exit)),
              ),
            ),
          ),
        )

  const settle = (records: number, outcome: "sent" | "dropped", failure: string | undefined) =>
    SubscriptionRef.update(ledger, (current) => ({
      ...current,
      settled: current.settled + records,
      sent: outcome === "sent" ? current.sent + records : current.sent,
      dropped: outcome === "dropped" ? current.dropped + records : current.dropped,
      lastFailure: failure === undefined ? undefined : shortMessage(failure),
      retrying: undefined,
    }))

  const exportEvents = (events: ReadonlyArray<InventoryEvent>): Effect.Effect<void> =>
    events.length === 0
      ? Effect.void
      : Effect.gen(function* () {
          const admission = yield* SubscriptionRef.modify(ledger, (current) =>
            admit(current, events.length, settings.queueSize),
          )
          if (admission.admitted > 0) {
            const admitted = admission.admitted === events.length ? events : events.slice(0, admission.admitted)
            const refused = yield* Queue.offerAll(buffer, admitted)
            if (refused.length > 0) {
              yield* SubscriptionRef.update(ledger, (current) => ({
                ...current,
                accepted: current.accepted - refused.length,
                dropped: current.dropped + refused.length,
              }))
            }
          }
          if (admission.overflowStarted) {
            yield* Effect.logWarning("exporter buffer full, dropping records").pipe(
              Effect.annotateLogs({ queueSize: settings.queueSize }),
              annotate,
            )
          }
          if (admission.overflowEnded !== undefined) {
            yield* Effect.logInfo("exporter buffer accepts records again").pipe(
              Effect.annotateLogs({ dropped: admission.overflowEnded }),
              annotate,
            )
          }
        })

  const attemptWrite = (batch: ReadonlyArray<InventoryEvent>): Effect.Effect<void, SinkError> =>
    Effect.suspend(() => sink.write(batch)).pipe(
      Effect.timeout(settings.writeTimeout),
      Effect.catchTag("TimeoutError", () =>
        Effect.fail(
          new SinkError({
            message: `write timed out after ${Duration.format(settings.writeTimeout)}`,
            retryable: true,
          }),
        ),
      ),
      Effect.catchDefect((defect) => Effect.fail(new SinkError({ message: defectMessage(defect), retryable: false }))),
      measured,
      Effect.tapError((error) =>
        SubscriptionRef.update(ledger, (current) => ({
          ...current,
          failed: current.failed + batch.length,
          lastFailure: shortMessage(error.message),
        })),
      ),
    )

  // One ERROR line when the sink starts refusing for good, and again when its reason changes: the batches
  // it refuses meanwhile are counted and logged at WARN, as every give-up is.
  let refusalLogged: string | undefined
  const reportRefusal = (failure: SinkError): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (failure.retryable || failure.reported === true || refusalLogged === failure.message) return Effect.void
      refusalLogged = failure.message
      return Effect.logError("exporter cannot write: the sink refuses it, retrying will not help").pipe(
        Effect.annotateLogs({ reason: shortMessage(failure.message) }),
        annotate,
      )
    })

  const writeBatch = Effect.fnUntraced(function* (batch: ReadonlyArray<InventoryEvent>) {
    const records = batch.length
    const startMillis = yield* Clock.currentTimeMillis
    for (let attempts = 1; ; attempts += 1) {
      const outcome = yield* Effect.result(attemptWrite(batch))
      const nowMillis = yield* Clock.currentTimeMillis
      if (Result.isSuccess(outcome)) {
        const wasFailing = (yield* SubscriptionRef.get(ledger)).lastFailure !== undefined
        refusalLogged = undefined
        yield* settle(records, "sent", undefined)
        if (wasFailing) {
          yield* Effect.logInfo("exporter writes again").pipe(
            Effect.annotateLogs({ records, attempts, after: wholeSeconds(nowMillis - startMillis) }),
            annotate,
          )
        }
        return
      }
      const failure = outcome.failure
      const decision = nextRetry(settings.retry, {
        attempts,
        elapsed: Duration.millis(nowMillis - startMillis),
        retryable: failure.retryable,
        retryAfter: failure.retryAfter,
        random: yield* Random.next,
      })
      if (decision._tag === "GiveUp") {
        yield* reportRefusal(failure)
        yield* settle(records, "dropped", failure.message)
        yield* Effect.logWarning("exporter gave up on a batch").pipe(
          Effect.annotateLogs({
            records,
            attempts,
            after: wholeSeconds(nowMillis - startMillis),
            retryable: failure.retryable,
            reason: shortMessage(failure.message),
          }),
          annotate,
        )
        return
      }
      const started = yield* SubscriptionRef.modify(ledger, (current) => [
        current.retrying === undefined,
        {
          ...current,
          retried: current.retried + records,
          retrying: { reason: shortMessage(failure.message), sinceMillis: startMillis },
        },
      ])
      if (started) {
        yield* Effect.logWarning("exporter write failed, retrying").pipe(
          Effect.annotateLogs({
            records,
            reason: shortMessage(failure.message),
            maxElapsed: Duration.format(settings.retry.maxElapsed),
          }),
          annotate,
        )
      }
      // A backoff under way when the exporter starts closing ends at once: the shutdown deadline is
      // better spent on one more attempt than on waiting; later backoffs run their course.
      const backoff = Effect.sleep(decision.delay)
      yield* (yield* Deferred.isDone(closing)) ? backoff : Effect.raceFirst(backoff, Deferred.await(closing))
    }
  })

  const waitUntilSettled = (timeout: Duration.Input): Effect.Effect<void> =>
    Effect.gen(function* () {
      const target = (yield* SubscriptionRef.get(ledger)).accepted
      yield* SubscriptionRef.changes(ledger).pipe(
        Stream.takeUntil((current) => current.settled >= target),
        Stream.runDrain,
        // Interruptible inside the deadline, not around it: closing runs uninterruptibly after an interrupt.
        Effect.interruptible,
        Effect.timeoutOption(timeout),
      )
    })

  const worker = yield* Queue.takeBetween(buffer, 1, settings.batchSize).pipe(
    Effect.flatMap(writeBatch),
    Effect.forever,
    Effect.forkScoped,
  )

  yield* Effect.addFinalizer(() =>
    Effect.gen(function* () {
      yield* SubscriptionRef.update(ledger, (current) => ({ ...current, closed: true }))
      yield* Deferred.succeed(closing, undefined)
      yield* waitUntilSettled(yield* closingBudget(deadline, shutdownTimeout, "flushing"))
      yield* Fiber.interrupt(worker).pipe(
        Effect.interruptible,
        Effect.timeoutOption(yield* closingBudget(deadline, shutdownTimeout)),
      )
      const unwritten = yield* SubscriptionRef.modify(ledger, (current) => {
        const held = current.accepted - current.settled
        return [held, { ...current, settled: current.accepted, dropped: current.dropped + held }] as const
      })
      if (unwritten > 0) {
        yield* Effect.logWarning("exporter stopped with records not written").pipe(
          Effect.annotateLogs({ dropped: unwritten }),
          annotate,
        )
      }
      yield* Queue.shutdown(buffer)
      if (sink.close !== undefined) {
        yield* sink.close.pipe(
          Effect.interruptible,
          Effect.timeoutOption(yield* closingBudget(deadline, shutdownTimeout)),
        )
      }
    }),
  )

  const health: Effect.Effect<Health> = Effect.gen(function* () {
    const current = yield* SubscriptionRef.get(ledger)
    if (current.retrying !== undefined) {
      const elapsed = (yield* Clock.currentTimeMillis) - current.retrying.sinceMillis
      return {
        healthy: false,
        message: `${current.retrying.reason}, retrying for ${wholeSeconds(elapsed)} (gives up after ${Duration.format(settings.retry.maxElapsed)})`,
      }
    }
    return current.lastFailure === undefined ? { healthy: true } : { healthy: false, message: current.lastFailure }
  })

  const stats: Effect.Effect<ExporterStats> = SubscriptionRef.get(ledger).pipe(
    Effect.map((current) => ({
      sent: current.sent,
      failed: current.failed,
      retried: current.retried,
      dropped: current.dropped,
      queued: current.accepted - current.settled,
    })),
  )

  return {
    id,
    export: exportEvents,
    flush: waitUntilSettled,
    health,
    stats,
    capacity: settings.queueSize,
  }
})
