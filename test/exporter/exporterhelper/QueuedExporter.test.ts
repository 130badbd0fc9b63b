import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Duration, Effect, Exit, Fiber, Scope } from "effect"
import { TestClock } from "effect/testing"
import { ShutdownDeadline } from "../../../src/component/ShutdownDeadline.ts"
import * as QueuedExporter from "../../../src/exporter/exporterhelper/QueuedExporter.ts"
import {
  defaultQueueSettings,
  defaultRetrySettings,
  type QueueSettings,
  type RetrySettings,
} from "../../../src/exporter/exporterhelper/QueueSettings.ts"
import { SinkError } from "../../../src/exporter/exporterhelper/Sink.ts"
import { capturedLog } from "../../log/CapturedLog.ts"
import { recordingMetrics } from "../../support/RecordingMetrics.ts"
import { addedEvents } from "../InventoryEvents.ts"
import { scriptedSink } from "./ScriptedSink.ts"

const settings = (
  overrides: Partial<Omit<QueueSettings, "retry">> & { readonly retry?: Partial<RetrySettings> } = {},
): QueueSettings => ({
  ...defaultQueueSettings,
  ...overrides,
  retry: { ...defaultRetrySettings, ...overrides.retry },
})

/** Moves virtual time forward in small steps so every sleeping fiber gets to run in between. */
const advance = (duration: Duration.Input) =>
  Effect.gen(function* () {
    const steps = Math.ceil(Duration.toMillis(Duration.fromInputUnsafe(duration)) / 100)
    for (let step = 0; step < steps; step++) yield* TestClock.adjust("100 millis")
  })

/** Closes `scope` while moving virtual time, as a shutdown waits on the clock. */
const closeAdvancing = (scope: Scope.Closeable, duration: Duration.Input) =>
  Effect.gen(function* () {
    const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
    yield* advance(duration)
    yield* Fiber.join(closing)
  })

const unavailable = new SinkError({ message: "503 Service Unavailable", retryable: true })
const unavailableFor = (seconds: number) =>
  new SinkError({ message: "503 Service Unavailable", retryable: true, retryAfter: Duration.seconds(seconds) })

/** A sink that runs `script` and remembers the virtual time of each attempt, from the first one. */
const timedSink = (script: (attempt: number, secondsSinceFirst: number) => Effect.Effect<void, SinkError>) => {
  const times: Array<number> = []
  const sink = scriptedSink((attempt) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      times.push(now)
      return script(attempt, (now - (times[0] ?? now)) / 1000)
    }),
  )
  return { sink, secondsSinceFirst: () => times.map((time) => (time - (times[0] ?? time)) / 1000) }
}
const rejected = new SinkError({ message: "400 Bad Request: record rejected", retryable: false })

describe("QueuedExporter", () => {
  it.effect("drops and counts what does not fit the buffer, without waiting for a stuck sink", () =>
    Effect.gen(function* () {
      const log = capturedLog()
      const sink = scriptedSink(() => Effect.never)
      const scope = yield* Scope.make()
      const exporter = yield* QueuedExporter.make({
        id: "stdout",
        sink,
        settings: settings({ queueSize: 5, batchSize: 2 }),
      }).pipe(Scope.provide(scope), Effect.provide(log.layer))

      yield* exporter.export(addedEvents(8)).pipe(Effect.provide(log.layer))
      yield* advance("1 second")
      yield* exporter.export(addedEvents(2, 8)).pipe(Effect.provide(log.layer))
      yield* exporter.export(addedEvents(4, 10)).pipe(Effect.provide(log.layer))

      const stats = yield* exporter.stats
      assert.strictEqual(stats.queued, 5)
      assert.strictEqual(stats.dropped, 9)
      assert.strictEqual(stats.sent, 0)
      const overflowLines = log.events().filter((event) => event.msg === "exporter buffer full, dropping records")
      assert.strictEqual(overflowLines.length, 1)
      assert.strictEqual(overflowLines[0]?.exporter, "stdout")
      yield* closeAdvancing(scope, "10 seconds")
    }),
  )

  it.effect("reports every write attempt to the service metrics, failed ones too", () =>
    Effect.gen(function* () {
      const metrics = recordingMetrics()
      const sink = scriptedSink((attempt) => (attempt === 1 ? Effect.fail(unavailable) : Effect.void))
      const exporter = yield* QueuedExporter.make({ id: "http", sink, settings: settings() }).pipe(
        Effect.provide(metrics.layer),
      )

      yield* exporter.export(addedEvents(3))
      yield* advance("10 seconds")

      assert.deepStrictEqual(metrics.recorded.exportWrites, [
        { exporter: "http", ok: false },
        { exporter: "http", ok: true },
      ])
    }),
  )

  it.effect("retries a retryable failure and then delivers every record exactly once", () =>
    Effect.gen(function* () {
      const sink = scriptedSink((attempt) => (attempt <= 2 ? Effect.fail(unavailable) : Effect.void))
      const exporter = yield* QueuedExporter.make({ id: "http", sink, settings: settings({ batchSize: 10 }) })
      const events = addedEvents(10)

      yield* exporter.export(events)
      yield* advance("10 seconds")

      assert.deepStrictEqual(sink.delivered, events)
      assert.strictEqual(sink.attempts.length, 3)
      assert.deepStrictEqual(yield* exporter.stats, { sent: 10, failed: 20, retried: 20, dropped: 0, queued: 0 })
      assert.deepStrictEqual(yield* exporter.health, { healthy: true })
    }),
  )

  it.effect("says at ERROR once that the sink refuses for good, again when the reason changes or after it wrote", () =>
    Effect.gen(function* () {
      const log = capturedLog()
      const other = new SinkError({ message: "403 Forbidden: token lacks write", retryable: false })
      const answers: ReadonlyArray<SinkError | undefined> = [rejected, rejected, other, other, undefined, rejected]
      const sink = scriptedSink((attempt) => {
        const answer = answers[attempt - 1]
        return answer === undefined ? Effect.void : Effect.fail(answer)
      })
      const exporter = yield* QueuedExporter.make({ id: "http", sink, settings: settings({ batchSize: 1 }) }).pipe(
        Effect.provide(log.layer),
      )

      yield* exporter.export(addedEvents(6))
      yield* advance("10 seconds")

      assert.strictEqual(sink.attempts.length, 6)
      const refusals = log.events().filter((event) => event.level === "error")
      assert.deepStrictEqual(
        refusals.map((event) => [event.msg, event.reason]),
        [
          ["exporter cannot write: the sink refuses it, retrying will not help", "400 Bad Request: record rejected"],
          ["exporter cannot write: the sink refuses it, retrying will not help", "403 Forbidden: token lacks write"],
          ["exporter cannot write: the sink refuses it, retrying will not help", "400 Bad Request: record rejected"],
        ],
      )
      assert.strictEqual(log.events().filter((event) => event.msg === "exporter gave up on a batch").length, 5)
      const reported = scriptedSink(() =>
        Effect.fail(new SinkError({ message: "refused", retryable: false, reported: true })),
      )
      const quiet = capturedLog()
      const second = yield* QueuedExporter.make({ id: "nats", sink: reported, settings: settings() }).pipe(
        Effect.provide(quiet.layer),
      )
      yield* second.export(addedEvents(3))
      yield* advance("10 seconds")
      assert.deepStrictEqual(
        quiet.events().filter((event) => event.level === "error"),
        [],
      )
    }),
  )

  it.effect("drops a batch the sink rejects for good, counts it, and logs once", () =>
    Effect.gen(function* () {
      const log = capturedLog()
      const sink = scriptedSink(() => Effect.fail(rejected))
      const exporter = yield* QueuedExporter.make({ id: "http", sink, settings: settings({ batchSize: 50 }) }).pipe(
        Effect.provide(log.layer),
      )

      yield* exporter.export(addedEvents(30))
      yield* advance("10 seconds")

      assert.strictEqual(sink.attempts.length, 1)
      assert.deepStrictEqual(yield* exporter.stats, { sent: 0, failed: 30, retried: 0, dropped: 30, queued: 0 })
      const giveUps = log.events().filter((event) => event.msg === "exporter gave up on a batch")
      assert.strictEqual(giveUps.length, 1)
      assert.strictEqual(giveUps[0]?.records, 30)
      assert.strictEqual(giveUps[0]?.reason, "400 Bad Request: record rejected")
      assert.strictEqual(giveUps[0]?.level, "warn")
    }),
  )

  it.effect("stops retrying after maxAttempts", () =>
    Effect.gen(function* () {
      const sink = scriptedSink(() => Effect.fail(unavailable))
      const exporter = yield* QueuedExporter.make({
        id: "nats",
        sink,
        settings: settings({ batchSize: 4, retry: { maxAttempts: 3, initialInterval: Duration.millis(200) } }),
      })

      yield* exporter.export(addedEvents(4))
      yield* advance("5 minutes")

      assert.strictEqual(sink.attempts.length, 3)
      assert.deepStrictEqual(yield* exporter.stats, { sent: 0, failed: 12, retried: 8, dropped: 4, queued: 0 })
    }),
  )

  it.effect("does not retry at all with maxAttempts 1", () =>
    Effect.gen(function* () {
      const sink = scriptedSink(() => Effect.fail(unavailable))
      const exporter = yield* QueuedExporter.make({
        id: "nats",
        sink,
        settings: settings({ retry: { maxAttempts: 1 } }),
      })

      yield* exporter.export(addedEvents(2))
      yield* advance("1 minute")

      assert.strictEqual(sink.attempts.length, 1)
      assert.deepStrictEqual(yield* exporter.stats, { sent: 0, failed: 2, retried: 0, dropped: 2, queued: 0 })
    }),
  )

  it.effect("stops retrying once maxElapsed has passed, however many attempts are left", () =>
    Effect.gen(function* () {
      const sink = scriptedSink(() => Effect.fail(unavailable))
      const exporter = yield* QueuedExporter.make({
        id: "nats",
        sink,
        settings: settings({
          retry: {
            maxAttempts: 1_000,
            initialInterval: Duration.seconds(1),
            maxInterval: Duration.seconds(1),
            maxElapsed: Duration.seconds(10),
          },
        }),
      })

      yield* exporter.export(addedEvents(1))
      yield* advance("2 minutes")

      const stats = yield* exporter.stats
      assert.strictEqual(stats.dropped, 1)
      assert.isAtLeast(sink.attempts.length, 5)
      assert.isAtMost(sink.attempts.length, 15)
    }),
  )

  it.effect(
    "by default retries a failing batch until maxElapsed, not a fixed number of times, then drops it once",
    () =>
      Effect.gen(function* () {
        const log = capturedLog()
        const { sink, secondsSinceFirst } = timedSink(() => Effect.fail(unavailable))
        const exporter = yield* QueuedExporter.make({ id: "otlp", sink, settings: settings() }).pipe(
          Effect.provide(log.layer),
        )

        yield* exporter.export(addedEvents(3))
        yield* advance("3 minutes")

        const times = secondsSinceFirst()
        assert.isAbove(times.length, 5)
        assert.isAtMost(times[times.length - 1] ?? Number.NaN, 120)
        assert.isAtLeast(times[times.length - 1] ?? Number.NaN, 120)
        for (let index = 1; index < times.length; index++) {
          assert.isAtMost(Math.round(((times[index] ?? 0) - (times[index - 1] ?? 0)) * 1000), 30_000)
        }
        assert.deepStrictEqual(yield* exporter.stats, {
          sent: 0,
          failed: 3 * times.length,
          retried: 3 * (times.length - 1),
          dropped: 3,
          queued: 0,
        })
        const giveUps = log.events().filter((event) => event.msg === "exporter gave up on a batch")
        assert.strictEqual(giveUps.length, 1)
        assert.strictEqual(giveUps[0]?.attempts, times.length)
        assert.strictEqual(giveUps[0]?.after, "2m")
        assert.strictEqual(log.events().filter((event) => event.msg === "exporter write failed, retrying").length, 1)
      }),
  )

  it.effect("rides out a 20-second outage (503 with Retry-After, then a hanging write) without losing a record", () =>
    Effect.gen(function* () {
      const log = capturedLog()
      const { sink, secondsSinceFirst } = timedSink((_, seconds) =>
        seconds < 10 ? Effect.fail(unavailableFor(5)) : seconds < 20 ? Effect.never : Effect.void,
      )
      const exporter = yield* QueuedExporter.make({
        id: "otlp",
        sink,
        settings: settings({ batchSize: 10, queueSize: 100 }),
      }).pipe(Effect.provide(log.layer))
      const events = addedEvents(40)

      yield* exporter.export(events.slice(0, 10))
      yield* advance("12 seconds")
      yield* exporter.export(events.slice(10))
      yield* advance("1 minute")

      assert.deepStrictEqual(sink.delivered, events)
      const stats = yield* exporter.stats
      assert.strictEqual(stats.sent, 40)
      assert.strictEqual(stats.dropped, 0)
      assert.isAtLeast(secondsSinceFirst()[1] ?? 0, 5)
      assert.deepStrictEqual(yield* exporter.health, { healthy: true })
      const recovered = log.events().filter((event) => event.msg === "exporter writes again")
      assert.strictEqual(recovered.length, 1)
      assert.strictEqual(recovered[0]?.records, 10)
    }),
  )

  it.effect("honours a retry-after longer than what is left of maxElapsed only until maxElapsed", () =>
    Effect.gen(function* () {
      const { sink, secondsSinceFirst } = timedSink((attempt) =>
        attempt === 1 ? Effect.fail(unavailable) : Effect.fail(unavailableFor(25)),
      )
      const exporter = yield* QueuedExporter.make({
        id: "otlp",
        sink,
        settings: settings({
          retry: { initialInterval: Duration.seconds(1), randomizationFactor: 0, maxElapsed: Duration.seconds(40) },
        }),
      })

      yield* exporter.export(addedEvents(1))
      yield* advance("2 minutes")

      assert.deepStrictEqual(secondsSinceFirst(), [0, 1, 26, 40])
      assert.strictEqual((yield* exporter.stats).dropped, 1)
    }),
  )

  it.effect("says in its health why it is retrying and for how long", () =>
    Effect.gen(function* () {
      const { sink } = timedSink((_, seconds) => (seconds < 45 ? Effect.fail(unavailable) : Effect.void))
      const exporter = yield* QueuedExporter.make({
        id: "otlp",
        sink,
        settings: settings({ retry: { maxInterval: Duration.seconds(5) } }),
      })

      yield* exporter.export(addedEvents(1))
      yield* advance("40 seconds")
      const during = yield* exporter.health
      assert.isFalse(during.healthy)
      assert.match(during.message ?? "", /^503 Service Unavailable, retrying for (3\d|40)s \(gives up after 2m\)$/)
      yield* advance("10 seconds")
      assert.deepStrictEqual(yield* exporter.health, { healthy: true })
    }),
  )

  it.effect("waits at most maxInterval even when the sink asks for a longer retry-after", () =>
    Effect.gen(function* () {
      const slowDown = new SinkError({
        message: "429 Too Many Requests",
        retryable: true,
        retryAfter: Duration.hours(1),
      })
      const sink = scriptedSink((attempt) => (attempt === 1 ? Effect.fail(slowDown) : Effect.void))
      const exporter = yield* QueuedExporter.make({
        id: "http",
        sink,
        settings: settings({ retry: { maxInterval: Duration.seconds(2) } }),
      })

      yield* exporter.export(addedEvents(3))
      yield* advance("3 seconds")

      assert.strictEqual(sink.attempts.length, 2)
      assert.strictEqual((yield* exporter.stats).sent, 3)
    }),
  )

  it.effect("treats a write that outlives writeTimeout as a retryable failure", () =>
    Effect.gen(function* () {
      const sink = scriptedSink((attempt) => (attempt === 1 ? Effect.never : Effect.void))
      const exporter = yield* QueuedExporter.make({
        id: "otlp",
        sink,
        settings: settings({ writeTimeout: Duration.seconds(5) }),
      })

      yield* exporter.export(addedEvents(2))
      yield* advance("5500 millis")
      const during = yield* exporter.health
      assert.isFalse(during.healthy)
      assert.include(during.message ?? "", "timed out")
      yield* advance("5 seconds")

      assert.strictEqual(sink.attempts.length, 2)
      assert.deepStrictEqual(yield* exporter.stats, { sent: 2, failed: 2, retried: 2, dropped: 0, queued: 0 })
    }),
  )

  it.effect("is unhealthy while the last write failed and healthy again after a success", () =>
    Effect.gen(function* () {
      const log = capturedLog()
      const sink = scriptedSink((attempt) => (attempt === 1 || attempt === 3 ? Effect.fail(rejected) : Effect.void))
      const exporter = yield* QueuedExporter.make({ id: "http", sink, settings: settings() }).pipe(
        Effect.provide(log.layer),
      )

      assert.deepStrictEqual(yield* exporter.health, { healthy: true })
      yield* exporter.export(addedEvents(1))
      yield* advance("1 second")
      assert.deepStrictEqual(yield* exporter.health, {
        healthy: false,
        message: "400 Bad Request: record rejected",
      })
      yield* exporter.export(addedEvents(1, 1))
      yield* advance("1 second")
      assert.deepStrictEqual(yield* exporter.health, { healthy: true })
      yield* exporter.export(addedEvents(1, 2))
      yield* advance("1 second")
      assert.isFalse((yield* exporter.health).healthy)
      assert.deepStrictEqual(
        log.events().map((event) => event.msg),
        [
          "exporter cannot write: the sink refuses it, retrying will not help",
          "exporter gave up on a batch",
          "exporter writes again",
          "exporter cannot write: the sink refuses it, retrying will not help",
          "exporter gave up on a batch",
        ],
      )
    }),
  )

  it.effect("flush waits until what was handed over is written", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const sink = scriptedSink(() => Deferred.await(gate))
      const exporter = yield* QueuedExporter.make({ id: "stdout", sink, settings: settings({ batchSize: 3 }) })

      yield* exporter.export(addedEvents(7))
      const flushing = yield* Effect.forkChild(exporter.flush("1 minute"))
      yield* advance("1 second")
      assert.isUndefined(flushing.pollUnsafe())

      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(flushing)
      assert.strictEqual(sink.delivered.length, 7)
      assert.strictEqual((yield* exporter.stats).queued, 0)
    }),
  )

  it.effect("flush gives up waiting after its timeout", () =>
    Effect.gen(function* () {
      const sink = scriptedSink(() => Effect.never)
      const scope = yield* Scope.make()
      const exporter = yield* QueuedExporter.make({
        id: "stdout",
        sink,
        settings: settings({ writeTimeout: Duration.hours(1) }),
      }).pipe(Scope.provide(scope))

      yield* exporter.export(addedEvents(2))
      const flushing = yield* Effect.forkChild(exporter.flush("10 seconds"))
      yield* advance("11 seconds")

      assert.isDefined(flushing.pollUnsafe())
      assert.strictEqual((yield* exporter.stats).queued, 2)
      yield* closeAdvancing(scope, "10 seconds")
    }),
  )

  it.effect("closing its scope writes what it holds, then closes the sink", () =>
    Effect.gen(function* () {
      const sink = scriptedSink(() => Effect.sleep("100 millis"))
      const scope = yield* Scope.make()
      const exporter = yield* QueuedExporter.make({ id: "stdout", sink, settings: settings({ batchSize: 2 }) }).pipe(
        Scope.provide(scope),
      )

      yield* exporter.export(addedEvents(9))
      yield* closeAdvancing(scope, "2 seconds")

      assert.strictEqual(sink.delivered.length, 9)
      assert.strictEqual(sink.closes.count, 1)
      assert.deepStrictEqual(yield* exporter.stats, { sent: 9, failed: 0, retried: 0, dropped: 0, queued: 0 })

      yield* exporter.export(addedEvents(3))
      assert.strictEqual((yield* exporter.stats).dropped, 3)
    }),
  )

  it.effect("closing its scope while a batch waits for its next retry tries it at once", () =>
    Effect.gen(function* () {
      const { sink, secondsSinceFirst } = timedSink((attempt) =>
        attempt === 1 ? Effect.fail(unavailable) : Effect.void,
      )
      const scope = yield* Scope.make()
      const exporter = yield* QueuedExporter.make({
        id: "otlp",
        sink,
        settings: settings({
          retry: { initialInterval: Duration.seconds(20), randomizationFactor: 0 },
        }),
        shutdownTimeout: "5 seconds",
      }).pipe(Scope.provide(scope))

      yield* exporter.export(addedEvents(4))
      yield* advance("1 second")
      yield* closeAdvancing(scope, "6 seconds")

      assert.deepStrictEqual(secondsSinceFirst(), [0, 1])
      assert.deepStrictEqual(yield* exporter.stats, { sent: 4, failed: 4, retried: 4, dropped: 0, queued: 0 })
    }),
  )

  it.effect("closing its scope drops and reports what the sink could not take within the deadline", () =>
    Effect.gen(function* () {
      const log = capturedLog()
      const sink = scriptedSink(() => Effect.never)
      const scope = yield* Scope.make()
      const exporter = yield* QueuedExporter.make({
        id: "otlp",
        sink,
        settings: settings({ writeTimeout: Duration.hours(1) }),
        shutdownTimeout: "3 seconds",
      }).pipe(Scope.provide(scope), Effect.provide(log.layer))

      yield* exporter.export(addedEvents(6))
      yield* closeAdvancing(scope, "4 seconds")

      assert.deepStrictEqual(yield* exporter.stats, { sent: 0, failed: 0, retried: 0, dropped: 6, queued: 0 })
      const report = log.events().filter((event) => event.msg === "exporter stopped with records not written")
      assert.strictEqual(report.length, 1)
      assert.strictEqual(report[0]?.dropped, 6)
      assert.strictEqual(report[0]?.exporter, "otlp")
    }),
  )

  it.effect("closing while the service shuts down waits no longer than the shutdown deadline leaves", () =>
    Effect.gen(function* () {
      const log = capturedLog()
      const deadline = yield* ShutdownDeadline.make("3 seconds")
      const scope = yield* Scope.make()
      const exporter = yield* QueuedExporter.make({
        id: "nats",
        sink: scriptedSink(() => Effect.never),
        settings: settings({ writeTimeout: Duration.hours(1) }),
        shutdownTimeout: "1 hour",
      }).pipe(Scope.provide(scope), Effect.provideService(ShutdownDeadline, deadline), Effect.provide(log.layer))

      yield* exporter.export(addedEvents(4))
      yield* deadline.begin
      yield* closeAdvancing(scope, "4 seconds")

      assert.strictEqual((yield* exporter.stats).dropped, 4)
      const report = log.events().filter((event) => event.msg === "exporter stopped with records not written")
      assert.deepStrictEqual(
        report.map((event) => [event.exporter, event.dropped]),
        [["nats", 4]],
      )
    }),
  )
})
