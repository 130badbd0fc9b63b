import { createHash } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Result } from "effect"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import * as HttpExporter from "../../../src/exporter/http/HttpExporter.ts"
import { recordJson } from "../../../src/exporter/RecordJson.ts"
import { freePort } from "../../../src/health/FreePort.ts"
import type { Exporter } from "../../../src/pipeline/Exporter.ts"
import { capturedLog } from "../../log/CapturedLog.ts"
import { addedEvents } from "../InventoryEvents.ts"
import { type ReceivedRequest, startHttpReceiver } from "./HttpReceiver.ts"

const settings = { id: "http", clusterName: "prod-eu", serviceVersion: "1.2.3" }

/** Quick retries, so a test of real sockets rides out a fault in a moment. */
const quickRetry = { initialInterval: "10ms", maxInterval: "50ms", multiplier: 2, maxElapsed: "20s" }

const exporterFor = (section: Record<string, unknown>, log = capturedLog()) =>
  HttpExporter.factory
    .create(Result.getOrThrow(HttpExporter.factory.validate({ retry: quickRetry, ...section })), settings)
    .pipe(Effect.provide(log.layer), Effect.orDie)

/** Polls until `check` holds; the test's timeout bounds the wait. */
const eventually = <A>(read: Effect.Effect<A>, check: (value: A) => boolean): Effect.Effect<A> =>
  Effect.gen(function* () {
    for (;;) {
      const value = yield* read
      if (check(value)) return value
      yield* Effect.sleep("10 millis")
    }
  })

const settled = (exporter: Exporter, count: number) =>
  eventually(exporter.stats, (stats) => stats.sent + stats.dropped === count)

const recordsOf = (events: ReadonlyArray<InventoryEvent>): ReadonlyArray<unknown> =>
  events.map((event) => JSON.parse(recordJson(event.record)))

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex")

const keysOf = (requests: ReadonlyArray<ReceivedRequest>): ReadonlyArray<unknown> =>
  requests.map((request) => request.headers["idempotency-key"])

const within = <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(Effect.timeout(Duration.seconds(20)))

describe("http exporter", () => {
  it.live("POSTs a JSON array of records with the documented headers", () =>
    within(
      Effect.gen(function* () {
        const receiver = yield* startHttpReceiver()
        const exporter = yield* exporterFor({
          endpoint: receiver.url,
          authToken: "the-token",
          headers: { "X-Tenant": "fleet", "User-Agent": "overridden" },
        })
        const events = addedEvents(3)
        yield* exporter.export(events)
        yield* settled(exporter, 3)

        assert.strictEqual(receiver.requests.length, 1)
        const request = receiver.requests[0] as ReceivedRequest
        assert.strictEqual(request.method, "POST")
        assert.strictEqual(request.path, "/gpus")
        assert.deepStrictEqual(JSON.parse(request.body), recordsOf(events))
        assert.strictEqual(request.headers["content-type"], "application/json")
        assert.strictEqual(request.headers["user-agent"], "gpu-serials/1.2.3")
        assert.strictEqual(request.headers["x-records-count"], "3")
        assert.strictEqual(request.headers.authorization, "Bearer the-token")
        assert.strictEqual(request.headers["x-tenant"], "fleet")
        assert.strictEqual(request.headers["content-encoding"], undefined)
        const timestamp = String(request.headers["x-timestamp"])
        assert.match(timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)
        assert.strictEqual(
          request.headers["idempotency-key"],
          sha256(events.map((event) => event.record.id).join("\n")),
        )
        assert.deepStrictEqual(yield* exporter.stats, { sent: 3, failed: 0, retried: 0, dropped: 0, queued: 0 })
      }).pipe(Effect.scoped),
    ),
  )

  it.live("sends the endpoint's userinfo as Basic authentication, and no credentials in the URL", () =>
    within(
      Effect.gen(function* () {
        const receiver = yield* startHttpReceiver()
        const exporter = yield* exporterFor({ endpoint: receiver.url.replace("://", "://svc:p%40ss@") })
        yield* exporter.export(addedEvents(1))
        yield* settled(exporter, 1)
        assert.strictEqual(
          receiver.requests[0]?.headers.authorization,
          `Basic ${Buffer.from("svc:p@ss").toString("base64")}`,
        )
        assert.strictEqual(receiver.requests[0]?.path, "/gpus")
      }).pipe(Effect.scoped),
    ),
  )

  it.live("writes NDJSON, one record per line", () =>
    within(
      Effect.gen(function* () {
        const receiver = yield* startHttpReceiver()
        const exporter = yield* exporterFor({ endpoint: receiver.url, format: "ndjson" })
        const events = addedEvents(4)
        yield* exporter.export(events)
        yield* settled(exporter, 4)
        const request = receiver.requests[0] as ReceivedRequest
        assert.strictEqual(request.headers["content-type"], "application/x-ndjson")
        assert.isTrue(request.body.endsWith("\n"))
        assert.deepStrictEqual(
          request.body
            .trimEnd()
            .split("\n")
            .map((line) => JSON.parse(line)),
          recordsOf(events),
        )
      }).pipe(Effect.scoped),
    ),
  )

  it.live("compresses the body with gzip", () =>
    within(
      Effect.gen(function* () {
        const receiver = yield* startHttpReceiver()
        const exporter = yield* exporterFor({ endpoint: receiver.url, compression: "gzip" })
        const events = addedEvents(50)
        yield* exporter.export(events)
        yield* settled(exporter, 50)
        const request = receiver.requests[0] as ReceivedRequest
        assert.strictEqual(request.headers["content-encoding"], "gzip")
        assert.isBelow(Number(request.headers["content-length"]), Buffer.byteLength(request.body))
        assert.deepStrictEqual(JSON.parse(request.body), recordsOf(events))
      }).pipe(Effect.scoped),
    ),
  )

  it.live("retries 408, 429, 500 and 503 with the same batch and the same idempotency key", () =>
    within(
      Effect.gen(function* () {
        const log = capturedLog()
        const receiver = yield* startHttpReceiver()
        receiver.script([{ status: 408 }, { status: 429 }, { status: 500 }, { status: 503 }])
        const exporter = yield* exporterFor({ endpoint: receiver.url }, log)
        const events = addedEvents(5)
        yield* exporter.export(events)
        yield* settled(exporter, 5)

        assert.deepStrictEqual(receiver.answered, [408, 429, 500, 503, 200])
        const keys = keysOf(receiver.requests)
        assert.strictEqual(new Set(keys).size, 1)
        for (const request of receiver.requests) assert.deepStrictEqual(JSON.parse(request.body), recordsOf(events))
        const stats = yield* exporter.stats
        assert.deepStrictEqual([stats.sent, stats.dropped, stats.retried], [5, 0, 20])
        const retrying = log.events().filter((event) => event.msg === "exporter write failed, retrying")
        assert.deepStrictEqual(
          retrying.map((event) => event.reason),
          ["HTTP endpoint answered HTTP 408"],
        )
      }).pipe(Effect.scoped),
    ),
  )

  it.live("gives up on a request the endpoint does not answer within the timeout, and retries it", () =>
    within(
      Effect.gen(function* () {
        const log = capturedLog()
        const receiver = yield* startHttpReceiver()
        receiver.script([{ hang: true }, { reset: true }])
        const exporter = yield* exporterFor({ endpoint: receiver.url, timeout: "200ms" }, log)
        yield* exporter.export(addedEvents(2))
        yield* settled(exporter, 2)

        assert.deepStrictEqual(receiver.answered, ["hang", "reset", 200])
        assert.strictEqual(new Set(keysOf(receiver.requests)).size, 1)
        assert.strictEqual((yield* exporter.stats).sent, 2)
        const retrying = log.events().find((event) => event.msg === "exporter write failed, retrying")
        assert.strictEqual(retrying?.reason, "HTTP request timed out after 200ms")
      }).pipe(Effect.scoped),
    ),
  )

  it.live("retries a refused connection until retry.maxElapsed, then drops the batch", () =>
    within(
      Effect.gen(function* () {
        const log = capturedLog()
        const port = yield* Effect.promise(freePort)
        const exporter = yield* exporterFor(
          { endpoint: `http://127.0.0.1:${port}/gpus`, retry: { ...quickRetry, maxElapsed: "200ms" } },
          log,
        )
        yield* exporter.export(addedEvents(3))
        yield* settled(exporter, 3)

        const stats = yield* exporter.stats
        assert.deepStrictEqual([stats.sent, stats.dropped], [0, 3])
        assert.isAbove(stats.retried, 0)
        const gaveUp = log.events().filter((event) => event.msg === "exporter gave up on a batch")
        assert.strictEqual(gaveUp.length, 1)
        assert.strictEqual(gaveUp[0]?.retryable, true)
        assert.include(String(gaveUp[0]?.reason), "ECONNREFUSED")
      }).pipe(Effect.scoped),
    ),
  )

  it.live("drops a batch the endpoint refuses with 400 at once, with one log line and no secret or record in it", () =>
    within(
      Effect.gen(function* () {
        const log = capturedLog()
        const receiver = yield* startHttpReceiver()
        const events = addedEvents(2)
        receiver.script([{ status: 400, body: `bad record ${events[0]?.record.uuid} s3cr3t-echo` }])
        const exporter = yield* exporterFor(
          {
            endpoint: receiver.url.replace("://", "://svc:s3cr3t-password@").concat("?key=s3cr3t-query"),
            authToken: "s3cr3t-token",
            headers: { "x-api-key": "s3cr3t-header" },
          },
          log,
        )
        yield* exporter.export(events)
        yield* settled(exporter, 2)

        assert.deepStrictEqual(receiver.answered, [400])
        assert.strictEqual(receiver.requests[0]?.headers.authorization, "Bearer s3cr3t-token")
        const stats = yield* exporter.stats
        assert.deepStrictEqual([stats.sent, stats.dropped, stats.retried], [0, 2, 0])
        const gaveUp = log.events().filter((event) => event.msg === "exporter gave up on a batch")
        assert.strictEqual(gaveUp.length, 1)
        assert.strictEqual(gaveUp[0]?.reason, "HTTP endpoint answered HTTP 400")
        assert.strictEqual(gaveUp[0]?.retryable, false)
        assert.strictEqual(gaveUp[0]?.records, 2)
        const written = log.lines.join("\n") + ((yield* exporter.health).message ?? "")
        assert.notInclude(written, "s3cr3t")
        for (const event of events) assert.notInclude(written, event.record.uuid)
      }).pipe(Effect.scoped),
    ),
  )

  it.live("drops at once a batch whose configured header Node refuses to send, naming the header only", () =>
    within(
      Effect.gen(function* () {
        const log = capturedLog()
        const receiver = yield* startHttpReceiver()
        const exporter = yield* exporterFor({ endpoint: receiver.url, headers: { "x-api-key": "s3cr3t\nvalue" } }, log)
        yield* exporter.export(addedEvents(1))
        yield* settled(exporter, 1)

        assert.strictEqual(receiver.requests.length, 0)
        assert.strictEqual((yield* exporter.stats).dropped, 1)
        const gaveUp = log.events().find((event) => event.msg === "exporter gave up on a batch")
        assert.strictEqual(gaveUp?.retryable, false)
        assert.include(String(gaveUp?.reason), "x-api-key")
        assert.notInclude(log.lines.join("\n"), "s3cr3t")
      }).pipe(Effect.scoped),
    ),
  )

  it.live("keeps its connection open between writes and closes it with the scope", () =>
    within(
      Effect.gen(function* () {
        const receiver = yield* startHttpReceiver()
        yield* Effect.gen(function* () {
          const exporter = yield* exporterFor({ endpoint: receiver.url, batchSize: 1 })
          yield* exporter.export(addedEvents(3))
          yield* settled(exporter, 3)
          assert.strictEqual(receiver.requests.length, 3)
          assert.strictEqual(receiver.connections(), 1)
        }).pipe(Effect.scoped)
        yield* eventually(Effect.sync(receiver.openConnections), (open) => open === 0)
      }).pipe(Effect.scoped),
    ),
  )

  it.effect("refuses to start when a TLS file cannot be read", () =>
    Effect.gen(function* () {
      const config = Result.getOrThrow(
        HttpExporter.factory.validate({ endpoint: "https://127.0.0.1:1/gpus", tls: { ca: "/nonexistent/ca.pem" } }),
      )
      const exit = yield* Effect.exit(HttpExporter.factory.create(config, settings))
      assert.isTrue(Exit.isFailure(exit))
      const failure = Exit.isFailure(exit) ? String(exit.cause) : ""
      assert.include(failure, "cannot read the HTTP TLS CA /nonexistent/ca.pem")
    }).pipe(Effect.scoped),
  )
})
