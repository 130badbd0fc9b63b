import { createServer } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { emptyResource } from "@opentelemetry/resources"
import { MeterProvider } from "@opentelemetry/sdk-metrics"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { HealthServer, HealthServerError } from "../../src/health/HealthServer.ts"
import { ReadinessChecks } from "../../src/health/ReadinessChecks.ts"
import { ServiceMeter } from "../../src/metrics/ServiceMeter.ts"
import { telemetryLayer } from "../metrics/TelemetryLayers.ts"
import { probe } from "./HttpProbe.ts"

const canListenOn = (port: number): Effect.Effect<boolean> =>
  Effect.callback<boolean>((resume) => {
    const server = createServer()
    server.once("error", () => resume(Effect.succeed(false)))
    server.listen({ port, host: "127.0.0.1" }, () => server.close(() => resume(Effect.succeed(true))))
  })

const refused = (port: number): Effect.Effect<boolean> =>
  Effect.promise(() =>
    fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5_000) }).then(
      () => false,
      () => true,
    ),
  )

/**
 * A meter whose Prometheus text comes only after `delayMillis`, the way a stuck collection would;
 * `lateWritten` is called once that text was written.
 */
const slowMeter = (delayMillis: number, lateWritten: () => void) =>
  Layer.succeed(
    ServiceMeter,
    ServiceMeter.of({
      meterProvider: new MeterProvider(),
      resource: emptyResource(),
      producer: { collect: () => Promise.reject(new Error("not collected in this test")) },
      attachReader: () => Effect.void,
      addProducer: () => Effect.void,
      servePrometheus: (_request, response) => {
        response.statusCode = 200
        response.setHeader("content-type", "text/plain")
        setTimeout(() => {
          response.end("# late\n")
          lateWritten()
        }, delayMillis)
      },
    }),
  )

describe("HealthServer", () => {
  it.live("answers liveness with 200 whatever the readiness checks say", () =>
    Effect.gen(function* () {
      const { port } = yield* HealthServer
      const checks = yield* ReadinessChecks
      yield* checks.register("informers", Effect.never)
      const answer = yield* probe(port, "/healthz")
      assert.strictEqual(answer.status, 200)
      assert.strictEqual(answer.body, "ok\n")
    }).pipe(Effect.scoped, Effect.provide(telemetryLayer())),
  )

  it.live("answers readiness 503 naming the failing check, then 200 once every check passes", () =>
    Effect.gen(function* () {
      const { port } = yield* HealthServer
      const checks = yield* ReadinessChecks
      let synced = false
      yield* checks.register(
        "informers",
        Effect.sync(() => (synced ? { healthy: true } : { healthy: false, message: "not synced" })),
      )
      yield* checks.register("exporter stdout", Effect.succeed({ healthy: true }))
      yield* checks.register("leader", Effect.succeed({ healthy: true }))

      const notReady = yield* probe(port, "/readyz")
      assert.strictEqual(notReady.status, 503)
      assert.strictEqual(notReady.contentType, "application/json")
      assert.deepStrictEqual(JSON.parse(notReady.body), {
        ready: false,
        checks: { "exporter stdout": "ok", informers: "not synced", leader: "ok" },
      })

      synced = true
      const ready = yield* probe(port, "/readyz")
      assert.strictEqual(ready.status, 200)
      assert.deepStrictEqual(JSON.parse(ready.body), {
        ready: true,
        checks: { "exporter stdout": "ok", informers: "ok", leader: "ok" },
      })
    }).pipe(Effect.scoped, Effect.provide(telemetryLayer())),
  )

  it.live("is not ready before any component registered a check", () =>
    Effect.gen(function* () {
      const { port } = yield* HealthServer
      const answer = yield* probe(port, "/readyz")
      assert.strictEqual(answer.status, 503)
      assert.isFalse(JSON.parse(answer.body).ready)
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("answers 503 when a readiness check hangs", () =>
    Effect.gen(function* () {
      const { port } = yield* HealthServer
      const checks = yield* ReadinessChecks
      yield* checks.register("exporter nats", Effect.never)
      yield* checks.register("leader", Effect.succeed({ healthy: true }))
      const answer = yield* probe(port, "/readyz")
      assert.strictEqual(answer.status, 503)
      const body = JSON.parse(answer.body)
      assert.isFalse(body.ready)
      assert.include(body.checks["exporter nats"], "did not answer within")
      assert.strictEqual(body.checks.leader, "ok")
    }).pipe(Effect.scoped, Effect.provide(telemetryLayer({ readiness: { checkTimeout: "100 millis" } }))),
  )

  it.live("answers 503 when the readiness answer misses the request deadline", () =>
    Effect.gen(function* () {
      const { port } = yield* HealthServer
      const checks = yield* ReadinessChecks
      yield* checks.register("informers", Effect.never)
      const answer = yield* probe(port, "/readyz")
      assert.strictEqual(answer.status, 503)
      assert.include(JSON.parse(answer.body).checks.readiness, "did not answer within")
    }).pipe(
      Effect.scoped,
      Effect.provide(
        telemetryLayer({ readiness: { checkTimeout: "1 minute" }, server: { requestTimeout: "100 millis" } }),
      ),
    ),
  )

  it.live("answers 503 when the metrics text misses the request deadline, and survives the late write", () => {
    const lateWrite = Promise.withResolvers<void>()
    return Effect.gen(function* () {
      const { port } = yield* HealthServer
      const answer = yield* probe(port, "/metrics")
      assert.strictEqual(answer.status, 503)
      yield* Effect.promise(() => lateWrite.promise)
      assert.strictEqual((yield* probe(port, "/healthz")).status, 200)
    }).pipe(
      Effect.provide(
        HealthServer.layer({ port: 0, host: "127.0.0.1", requestTimeout: "100 millis" }).pipe(
          Layer.provide([ReadinessChecks.layer(), slowMeter(200, () => lateWrite.resolve())]),
        ),
      ),
    )
  })

  it.live("answers 404 for unknown paths and 405 for methods other than GET and HEAD", () =>
    Effect.gen(function* () {
      const { port } = yield* HealthServer
      assert.strictEqual((yield* probe(port, "/")).status, 404)
      assert.strictEqual((yield* probe(port, "/healthz/extra")).status, 404)
      assert.strictEqual((yield* probe(port, "/debug/pprof")).status, 404)
      assert.strictEqual((yield* probe(port, "/healthz?verbose=1")).status, 200)
      const post = yield* probe(port, "/readyz", "POST")
      assert.strictEqual(post.status, 405)
      const head = yield* probe(port, "/metrics", "HEAD")
      assert.strictEqual(head.status, 200)
      assert.strictEqual(head.body, "")
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("stops listening when its scope closes", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const services = yield* Layer.buildWithScope(telemetryLayer(), scope)
      const { port } = Context.get(services, HealthServer)
      assert.strictEqual((yield* probe(port, "/healthz")).status, 200)
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(yield* refused(port))
      assert.isTrue(yield* canListenOn(port))
    }),
  )

  it.live("fails to start with the port when the port is taken", () =>
    Effect.gen(function* () {
      const { port } = yield* HealthServer
      const second = yield* Layer.build(telemetryLayer({ server: { port } })).pipe(Effect.scoped, Effect.flip)
      assert.instanceOf(second, HealthServerError)
      assert.strictEqual(second.port, port)
    }).pipe(Effect.provide(telemetryLayer())),
  )
})
