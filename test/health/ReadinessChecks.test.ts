import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope } from "effect"
import { TestClock } from "effect/testing"
import { ReadinessChecks } from "../../src/health/ReadinessChecks.ts"

const healthy = Effect.succeed({ healthy: true })

describe("ReadinessChecks", () => {
  it.effect("is not ready before any check is registered", () =>
    Effect.gen(function* () {
      const checks = yield* ReadinessChecks
      const readiness = yield* checks.readiness
      assert.isFalse(readiness.ready)
      assert.deepStrictEqual(Object.keys(readiness.checks), ["service"])
    }).pipe(Effect.provide(ReadinessChecks.layer())),
  )

  it.effect("names an expected check that no component registered yet", () =>
    Effect.gen(function* () {
      const checks = yield* ReadinessChecks
      yield* checks.register("exporters", healthy)
      const readiness = yield* checks.readiness
      assert.deepStrictEqual(readiness, { ready: false, checks: { exporters: "ok", informers: "not started" } })
    }).pipe(Effect.scoped, Effect.provide(ReadinessChecks.layer({ expected: ["informers"] }))),
  )

  it.effect("is ready only when every check passes, and shows why one does not", () =>
    Effect.gen(function* () {
      const checks = yield* ReadinessChecks
      let synced = false
      yield* checks.register(
        "informers",
        Effect.sync(() => (synced ? { healthy: true } : { healthy: false, message: "not synced" })),
      )
      yield* checks.register("leader", healthy)
      assert.deepStrictEqual(yield* checks.readiness, {
        ready: false,
        checks: { informers: "not synced", leader: "ok" },
      })
      synced = true
      assert.deepStrictEqual(yield* checks.readiness, { ready: true, checks: { informers: "ok", leader: "ok" } })
    }).pipe(Effect.scoped, Effect.provide(ReadinessChecks.layer())),
  )

  it.effect("shows a passing check's note after ok, as a follower's checks say they follow", () =>
    Effect.gen(function* () {
      const checks = yield* ReadinessChecks
      yield* checks.register("informers", Effect.succeed({ healthy: true, message: "following" }))
      yield* checks.register("exporters", healthy)
      assert.deepStrictEqual(yield* checks.readiness, {
        ready: true,
        checks: { exporters: "ok", informers: "ok (following)" },
      })
    }).pipe(Effect.scoped, Effect.provide(ReadinessChecks.layer())),
  )

  it.effect("shows a reason that quotes a URL without its credentials or query values", () =>
    Effect.gen(function* () {
      const checks = yield* ReadinessChecks
      yield* checks.register(
        "exporters",
        Effect.succeed({
          healthy: false,
          message: "otlp: request to http://u:s3cr3t@collector/v1/logs?k=s3cr3t failed",
        }),
      )
      assert.deepStrictEqual((yield* checks.readiness).checks, {
        exporters: "otlp: request to http://<redacted>@collector/v1/logs?k=<redacted> failed",
      })
    }).pipe(Effect.scoped, Effect.provide(ReadinessChecks.layer())),
  )

  it.effect("counts a check that does not answer within its timeout as not ready", () =>
    Effect.gen(function* () {
      const checks = yield* ReadinessChecks
      yield* checks.register("exporter nats", Effect.never)
      yield* checks.register("leader", healthy)
      const answering = yield* Effect.forkChild(checks.readiness)
      yield* TestClock.adjust("2 seconds")
      const readiness = yield* Fiber.join(answering)
      assert.isFalse(readiness.ready)
      assert.include(readiness.checks["exporter nats"] ?? "", "did not answer within")
      assert.strictEqual(readiness.checks.leader, "ok")
    }).pipe(Effect.scoped, Effect.provide(ReadinessChecks.layer({ checkTimeout: "1 second" }))),
  )

  it.effect("counts a check that dies as not ready and keeps its reason to one short line", () =>
    Effect.gen(function* () {
      const checks = yield* ReadinessChecks
      yield* checks.register("exporter http", Effect.die(new Error("socket closed")))
      yield* checks.register(
        "exporter stdout",
        Effect.succeed({ healthy: false, message: `write failed:\n${"x".repeat(900)}` }),
      )
      const readiness = yield* checks.readiness
      assert.isFalse(readiness.ready)
      assert.strictEqual(readiness.checks["exporter http"], "check failed: socket closed")
      const stdout = readiness.checks["exporter stdout"] ?? ""
      assert.isAtMost(stdout.length, 200)
      assert.notInclude(stdout, "\n")
      assert.isTrue(stdout.startsWith("write failed: xxx"))
    }).pipe(Effect.scoped, Effect.provide(ReadinessChecks.layer())),
  )

  it.effect("drops a check when its component's scope closes", () =>
    Effect.gen(function* () {
      const checks = yield* ReadinessChecks
      yield* checks.register("leader", healthy)
      const component = yield* Scope.make()
      yield* checks
        .register("informers", Effect.succeed({ healthy: false, message: "not synced" }))
        .pipe(Scope.provide(component))
      assert.isFalse((yield* checks.readiness).ready)
      yield* Scope.close(component, Exit.void)
      assert.deepStrictEqual(yield* checks.readiness, { ready: true, checks: { leader: "ok" } })
    }).pipe(Effect.scoped, Effect.provide(ReadinessChecks.layer())),
  )

  it.effect("lets a restarted component replace its check without the old scope removing it", () =>
    Effect.gen(function* () {
      const checks = yield* ReadinessChecks
      const first = yield* Scope.make()
      yield* checks.register("informers", Effect.succeed({ healthy: false, message: "old" })).pipe(Scope.provide(first))
      yield* checks.register("informers", healthy)
      yield* Scope.close(first, Exit.void)
      assert.deepStrictEqual(yield* checks.readiness, { ready: true, checks: { informers: "ok" } })
    }).pipe(Effect.scoped, Effect.provide(ReadinessChecks.layer())),
  )
})
