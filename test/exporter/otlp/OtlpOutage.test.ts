import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import * as OtlpExporter from "../../../src/exporter/otlp/OtlpExporter.ts"
import type { Exporter } from "../../../src/pipeline/Exporter.ts"
import { capturedLog } from "../../log/CapturedLog.ts"
import { addedEvents } from "../InventoryEvents.ts"
import { type OtlpReceiver, type ScriptedAnswer, startOtlpReceiver } from "./OtlpReceiver.ts"
import { decodeLogsRequest } from "./ProtobufLogsRequest.ts"

const settings = { id: "otlp", clusterName: "prod-eu", serviceVersion: "1.2.3" }

/** How many times the receiver accepted each record, by record id (`gpu_serials.event.id`). */
const acceptedById = (receiver: OtlpReceiver): ReadonlyMap<string, number> => {
  const counts = new Map<string, number>()
  for (const request of receiver.accepted("/v1/logs")) {
    for (const logs of decodeLogsRequest(request.body)) {
      for (const record of logs.logRecords) {
        const id = record.attributes.get("gpu_serials.event.id")
        const key = id !== undefined && "string" in id ? id.string : "<no id>"
        counts.set(key, (counts.get(key) ?? 0) + 1)
      }
    }
  }
  return counts
}

/** Every record exported reached the receiver exactly once. */
const assertDeliveredOnce = (receiver: OtlpReceiver, ids: ReadonlyArray<string>) => {
  const counts = acceptedById(receiver)
  assert.deepStrictEqual([...counts.keys()].sort(), [...ids].sort())
  assert.deepStrictEqual(
    [...counts].filter(([, count]) => count !== 1),
    [],
  )
}

const logLines = (log: ReturnType<typeof capturedLog>, message: string) =>
  log.events().filter((event) => event.msg === message)

/** The first answers of the outage: each kind of fault at least once, whatever the backoff's randomness. */
const firstAnswers: ReadonlyArray<ScriptedAnswer> = [
  { status: 503, headers: { "retry-after": "5" } },
  { status: 429, headers: { "retry-after": "2" } },
  { hang: true },
  { reset: true },
]

/** The collector's answers for the rest of the outage, by the second (since the first export) each one ends. */
const outagePhases: ReadonlyArray<readonly [number, ScriptedAnswer]> = [
  [15, { status: 503, headers: { "retry-after": "5" } }],
  [30, { status: 429 }],
  [45, { reset: true }],
  [60, { hang: true }],
]

/** Lets the real sockets work for a moment between two steps of virtual time. */
const realPause = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 5)))

describe("otlp exporter through collector outages", () => {
  it.effect(
    "loses and duplicates no record over a 60-second outage (503, 429, hang, reset) shorter than retry.maxElapsed",
    () =>
      Effect.gen(function* () {
        const log = capturedLog()
        const receiver = yield* startOtlpReceiver
        // A request deadline of 20 virtual seconds is 200 steps, a second or more of real time: an answered
        // request never times out on a busy machine, so a duplicate would be the exporter's doing.
        const config = Result.getOrThrow(
          OtlpExporter.factory.validate({
            endpoint: receiver.url,
            metricsInterval: "0s",
            timeout: "20s",
            batchSize: 50,
          }),
        )
        const exporter: Exporter = yield* OtlpExporter.factory
          .create(config, settings)
          .pipe(Effect.provide(log.layer), Effect.orDie)
        receiver.script(firstAnswers)
        const events = addedEvents(300)
        let exported = 0
        let healthDuringOutage = ""

        // Virtual time runs in 100 ms steps; a reading of 20 GPUs is exported every 5 s for 75 s.
        for (let millis = 0; millis <= 180_000; millis += 100) {
          const phase = outagePhases.find(([untilSecond]) => millis < untilSecond * 1000)
          receiver.outage(phase?.[1])
          if (millis % 5000 === 0 && exported < events.length) {
            yield* exporter.export(events.slice(exported, exported + 20))
            exported += 20
          }
          if (millis === 45_000) healthDuringOutage = (yield* exporter.health).message ?? "healthy"
          if (exported === events.length && (yield* exporter.stats).sent === events.length) break
          yield* TestClock.adjust("100 millis")
          yield* realPause
        }

        for (const kind of [503, 429, "hang", "reset"] as const) assert.include(receiver.answered, kind)
        assertDeliveredOnce(
          receiver,
          events.map((event) => event.record.id),
        )
        const stats = yield* exporter.stats
        assert.strictEqual(stats.sent, events.length)
        assert.strictEqual(stats.dropped, 0)
        assert.strictEqual(stats.queued, 0)
        assert.match(healthDuringOutage, /^(OTLP|write).*, retrying for \d+s \(gives up after 2m\)$/)
        assert.deepStrictEqual(yield* exporter.health, { healthy: true })
        assert.strictEqual(logLines(log, "exporter write failed, retrying").length, 1)
        assert.strictEqual(logLines(log, "exporter writes again").length, 1)
        assert.strictEqual(logLines(log, "exporter gave up on a batch").length, 0)
      }).pipe(Effect.scoped),
    60_000,
  )

  it.live("rides out each kind of fault in real time, with short timeouts", () =>
    Effect.gen(function* () {
      const log = capturedLog()
      const receiver = yield* startOtlpReceiver
      receiver.script([
        { status: 503, headers: { "retry-after": "1" } },
        { status: 429 },
        { hang: true },
        { reset: true },
        { status: 502 },
      ])
      const config = Result.getOrThrow(
        OtlpExporter.factory.validate({
          endpoint: receiver.url,
          metricsInterval: "0s",
          timeout: "300ms",
          writeTimeout: "300ms",
          retry: { initialInterval: "50ms", maxInterval: "1s", multiplier: 2, maxElapsed: "30s" },
        }),
      )
      const exporter = yield* OtlpExporter.factory
        .create(config, settings)
        .pipe(Effect.provide(log.layer), Effect.orDie)
      const events = addedEvents(30)
      yield* exporter.export(events)
      for (;;) {
        if ((yield* exporter.stats).sent === events.length) break
        yield* Effect.sleep("20 millis")
      }

      assert.deepStrictEqual(receiver.answered, [503, 429, "hang", "reset", 502, 200])
      assertDeliveredOnce(
        receiver,
        events.map((event) => event.record.id),
      )
      assert.strictEqual((yield* exporter.stats).dropped, 0)
      const retrying = logLines(log, "exporter write failed, retrying")
      assert.strictEqual(retrying.length, 1)
      assert.strictEqual(retrying[0]?.reason, "OTLP receiver answered HTTP 503")
      assert.strictEqual(retrying[0]?.level, "warn")
      const recovered = logLines(log, "exporter writes again")
      assert.strictEqual(recovered.length, 1)
      assert.strictEqual(recovered[0]?.attempts, 6)
    }).pipe(Effect.scoped, Effect.timeout(Duration.seconds(20)), Effect.orDie),
  )
})
