import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import * as HttpExporter from "../../../src/exporter/http/HttpExporter.ts"
import { capturedLog } from "../../log/CapturedLog.ts"
import { addedEvents } from "../InventoryEvents.ts"
import { type HttpReceiver, startHttpReceiver } from "./HttpReceiver.ts"

const settings = { id: "http", clusterName: "prod-eu", serviceVersion: "1.2.3" }

/** Lets the real sockets work for a moment between two steps of virtual time. */
const realPause = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 5)))

/** Waits in real time until the receiver has answered `count` requests; at most about 10 s. */
const answeredAtLeast = (receiver: HttpReceiver, count: number) =>
  Effect.gen(function* () {
    for (let step = 0; step < 2000 && receiver.answered.length < count; step += 1) yield* realPause
    assert.isAtLeast(receiver.answered.length, count)
  })

/** Virtual seconds until the receiver gets request number `count`. */
const secondsUntilRequest = (receiver: HttpReceiver, count: number) =>
  Effect.gen(function* () {
    let seconds = 0
    while (receiver.requests.length < count && seconds < 120) {
      yield* TestClock.adjust("1 second")
      seconds += 1
      for (let pause = 0; pause < 4 && receiver.requests.length < count; pause += 1) yield* realPause
    }
    return seconds
  })

describe("http exporter and Retry-After", () => {
  it.effect("waits as long as a 429 or a 503 asks before sending the batch again", () =>
    Effect.gen(function* () {
      const log = capturedLog()
      const receiver = yield* startHttpReceiver()
      receiver.script([
        { status: 429, headers: { "retry-after": "20" } },
        { status: 503, headers: { "retry-after": "10" } },
      ])
      const config = Result.getOrThrow(
        HttpExporter.factory.validate({ endpoint: receiver.url, retry: { initialInterval: "100ms" } }),
      )
      const exporter = yield* HttpExporter.factory
        .create(config, settings)
        .pipe(Effect.provide(log.layer), Effect.orDie)
      yield* exporter.export(addedEvents(3))

      yield* answeredAtLeast(receiver, 1)
      assert.isAtLeast(yield* secondsUntilRequest(receiver, 2), 20)
      yield* answeredAtLeast(receiver, 2)
      assert.isAtLeast(yield* secondsUntilRequest(receiver, 3), 10)
      yield* answeredAtLeast(receiver, 3)
      assert.deepStrictEqual(receiver.answered, [429, 503, 200])
      assert.strictEqual(new Set(receiver.requests.map((request) => request.headers["idempotency-key"])).size, 1)
    }).pipe(Effect.scoped),
  )
})
