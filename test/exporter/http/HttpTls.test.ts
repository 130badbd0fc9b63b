import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Duration, Effect, Result } from "effect"
import * as HttpExporter from "../../../src/exporter/http/HttpExporter.ts"
import type { Exporter } from "../../../src/pipeline/Exporter.ts"
import { capturedLog } from "../../log/CapturedLog.ts"
import { makeTestCertificates, type TestCertificates } from "../../support/TestCertificates.ts"
import { addedEvents } from "../InventoryEvents.ts"
import { startHttpReceiver } from "./HttpReceiver.ts"

const settings = { id: "http", clusterName: "prod-eu", serviceVersion: "1.2.3" }

let pki: TestCertificates

beforeAll(() => {
  pki = makeTestCertificates()
}, 60_000)

afterAll(() => pki?.remove())

/** Retries for a moment only: a certificate the exporter does not trust stays untrusted. */
const shortRetry = { initialInterval: "10ms", maxInterval: "50ms", multiplier: 2, maxElapsed: "300ms" }

const exporterFor = (section: Record<string, unknown>, log = capturedLog()) =>
  HttpExporter.factory
    .create(Result.getOrThrow(HttpExporter.factory.validate({ retry: shortRetry, ...section })), settings)
    .pipe(Effect.provide(log.layer), Effect.orDie)

const settled = (exporter: Exporter, count: number) =>
  Effect.gen(function* () {
    for (;;) {
      const stats = yield* exporter.stats
      if (stats.sent + stats.dropped === count) return stats
      yield* Effect.sleep("10 millis")
    }
  })

const within = <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(Effect.timeout(Duration.seconds(20)))

describe("http exporter over TLS", () => {
  it.live("trusts an endpoint whose certificate the configured CA signs", () =>
    within(
      Effect.gen(function* () {
        const receiver = yield* startHttpReceiver({ cert: pki.serverCert, key: pki.serverKey })
        const exporter = yield* exporterFor({ endpoint: receiver.url, tls: { ca: pki.caFile } })
        yield* exporter.export(addedEvents(2))
        const stats = yield* settled(exporter, 2)
        assert.deepStrictEqual([stats.sent, stats.dropped], [2, 0])
        assert.strictEqual(receiver.accepted.length, 1)
      }).pipe(Effect.scoped),
    ),
  )

  it.live("retries, then drops, writes to an endpoint whose certificate it cannot verify", () =>
    within(
      Effect.gen(function* () {
        const log = capturedLog()
        const receiver = yield* startHttpReceiver({ cert: pki.serverCert, key: pki.serverKey })
        const exporter = yield* exporterFor({ endpoint: receiver.url }, log)
        yield* exporter.export(addedEvents(2))
        const stats = yield* settled(exporter, 2)
        assert.deepStrictEqual([stats.sent, stats.dropped], [0, 2])
        assert.isAbove(stats.retried, 0)
        assert.strictEqual(receiver.requests.length, 0)
        const gaveUp = log.events().filter((event) => event.msg === "exporter gave up on a batch")
        assert.strictEqual(gaveUp.length, 1)
        assert.strictEqual(gaveUp[0]?.retryable, true)
        assert.match(String(gaveUp[0]?.reason), /^HTTP request failed: .*certificate/)
      }).pipe(Effect.scoped),
    ),
  )

  it.live("shows its client certificate to an endpoint that requires one", () =>
    within(
      Effect.gen(function* () {
        const receiver = yield* startHttpReceiver({
          cert: pki.serverCert,
          key: pki.serverKey,
          ca: pki.ca,
          requireClientCert: true,
        })
        const withCertificate = yield* exporterFor({
          endpoint: receiver.url,
          tls: { ca: pki.caFile, cert: pki.clientCertFile, key: pki.clientKeyFile },
        })
        yield* withCertificate.export(addedEvents(1))
        assert.strictEqual((yield* settled(withCertificate, 1)).sent, 1)
        assert.strictEqual(receiver.accepted[0]?.clientName, "gpu-serials")

        const without = yield* exporterFor({ endpoint: receiver.url, tls: { ca: pki.caFile } })
        yield* without.export(addedEvents(1, 10))
        assert.deepStrictEqual((yield* settled(without, 1)).dropped, 1)
        assert.strictEqual(receiver.requests.length, 1)
      }).pipe(Effect.scoped),
    ),
  )
})
