import { PassThrough, Writable } from "node:stream"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Result } from "effect"
import type { ConfigProblem } from "../../src/component/Component.ts"
import * as StdoutExporter from "../../src/exporter/stdout/StdoutExporter.ts"
import { addedEvent, addedEvents } from "./InventoryEvents.ts"

const settings = { clusterName: "prod-eu", serviceVersion: "0.1.0" }

const collected = () => {
  const stream = new PassThrough()
  const chunks: Array<string> = []
  stream.on("data", (chunk: Buffer) => chunks.push(chunk.toString("utf8")))
  return { stream, text: () => chunks.join("") }
}

/** The top-level keys of a JSON object line, in order, duplicates kept (JSON.parse would hide them). */
const topLevelKeys = (line: string): Array<string> => {
  const keys: Array<string> = []
  let depth = 0
  let index = 0
  while (index < line.length) {
    const char = line[index]
    if (char === '"') {
      const end = line.indexOf('"', index + 1)
      const after = line[end + 1]
      if (depth === 1 && after === ":") keys.push(line.slice(index + 1, end))
      index = end + 1
      continue
    }
    if (char === "{" || char === "[") depth += 1
    if (char === "}" || char === "]") depth -= 1
    index += 1
  }
  return keys
}

const problemsOf = (section: unknown): ReadonlyArray<ConfigProblem> => {
  const outcome = StdoutExporter.factory.validate(section)
  return Result.isFailure(outcome) ? outcome.failure : []
}

describe("stdout exporter", () => {
  it.effect("writes one parseable JSON line per record, with the Go original's field names", () =>
    Effect.gen(function* () {
      const output = collected()
      const factory = StdoutExporter.makeFactory({ stream: output.stream })
      const exporter = yield* factory.create(factory.defaultConfig, { ...settings, id: "stdout" })
      const events = addedEvents(25)

      yield* exporter.export(events.slice(0, 10))
      yield* exporter.export(events.slice(10))
      yield* exporter.flush("5 seconds")

      const lines = output.text().split("\n")
      assert.strictEqual(lines.pop(), "")
      assert.strictEqual(lines.length, 25)
      lines.forEach((line, index) => {
        const parsed = JSON.parse(line)
        for (const field of ["cluster", "node", "machine", "source", "chassis", "gpu", "time"]) {
          assert.isString(parsed[field], field)
        }
        assert.strictEqual(parsed.gpu, events[index]?.record.gpu)
        assert.strictEqual(parsed.node, `gpu-node-${index}`)
        assert.strictEqual(parsed.schema, "gpu-serials/v1")
        assert.strictEqual(parsed.uuid, events[index]?.record.uuid)
        assert.isUndefined(parsed.origin)
        assert.isUndefined(parsed.nodeUid)
      })
      assert.deepStrictEqual((yield* exporter.stats).sent, 25)
    }),
  )

  it.effect("writes a health change with the whole health object and the state before, last", () =>
    Effect.gen(function* () {
      const output = collected()
      const factory = StdoutExporter.makeFactory({ stream: output.stream })
      const exporter = yield* factory.create(factory.defaultConfig, { ...settings, id: "stdout" })
      const base = addedEvent(3)
      const health = {
        state: "failed" as const,
        reasons: ["row-remap-failure"],
        rmaEligible: true,
        remappedRows: { correctable: 0, uncorrectable: 4, pending: false, failure: true },
        ecc: { enabled: true, volatileUncorrectable: 0 },
      }
      yield* exporter.export([
        { ...base, record: { ...base.record, event: "health", health, previousHealthState: "degraded" } },
      ])
      yield* exporter.flush("5 seconds")

      const line = output.text().trimEnd()
      assert.deepStrictEqual(topLevelKeys(line).slice(-2), ["health", "previousHealthState"])
      const parsed = JSON.parse(line)
      assert.strictEqual(parsed.event, "health")
      assert.deepStrictEqual(parsed.health, health)
      assert.strictEqual(parsed.previousHealthState, "degraded")
    }),
  )

  it.effect("writes each key once, in the same order for every record", () =>
    Effect.gen(function* () {
      const output = collected()
      const factory = StdoutExporter.makeFactory({ stream: output.stream })
      const exporter = yield* factory.create(factory.defaultConfig, { ...settings, id: "stdout" })
      const plain = addedEvent(1)
      const moved = addedEvent(2)
      const movedEvent = {
        ...moved,
        record: { ...moved.record, event: "moved" as const, previousNode: "gpu-node-9", previousMachine: "i-0old" },
      }

      yield* exporter.export([plain, movedEvent])
      yield* exporter.flush("5 seconds")

      const [first = "", second = ""] = output.text().trimEnd().split("\n")
      const firstKeys = topLevelKeys(first)
      const secondKeys = topLevelKeys(second)
      assert.strictEqual(new Set(firstKeys).size, firstKeys.length)
      assert.strictEqual(new Set(secondKeys).size, secondKeys.length)
      assert.deepStrictEqual(firstKeys.slice(0, 10), [
        "schema",
        "event",
        "id",
        "cluster",
        "node",
        "machine",
        "source",
        "chassis",
        "gpu",
        "time",
      ])
      assert.deepStrictEqual(secondKeys.slice(-2), ["previousNode", "previousMachine"])
      assert.deepStrictEqual(secondKeys.slice(0, firstKeys.length), firstKeys)
    }),
  )

  it.live("waits for the stream to drain before writing the next batch", () =>
    Effect.gen(function* () {
      const written: Array<string> = []
      const pending: Array<() => void> = []
      const stream = new Writable({
        highWaterMark: 64,
        write(chunk: Buffer, _encoding, callback) {
          written.push(chunk.toString("utf8"))
          pending.push(callback)
        },
      })
      const factory = StdoutExporter.makeFactory({ stream })
      const config = { ...factory.defaultConfig, batchSize: 1 }
      const exporter = yield* factory.create(config, { ...settings, id: "stdout" })

      yield* exporter.export(addedEvents(3))
      // The next batch listening for `drain` shows it reached the stream and was held back there.
      while (stream.listenerCount("drain") === 0) yield* Effect.sleep("5 millis")
      assert.strictEqual(written.length, 1)
      assert.isTrue(stream.writableNeedDrain)

      while (written.length < 3) {
        pending.shift()?.()
        yield* Effect.sleep("10 millis")
      }
      for (const release of pending.splice(0)) release()
      yield* exporter.flush("5 seconds")
      assert.strictEqual(written.join("").trimEnd().split("\n").length, 3)
      assert.deepStrictEqual(yield* exporter.stats, { sent: 3, failed: 0, retried: 0, dropped: 0, queued: 0 })
    }),
  )

  it.effect("gives up on a closed stream and reports it in its health", () =>
    Effect.gen(function* () {
      const output = collected()
      const factory = StdoutExporter.makeFactory({ stream: output.stream })
      const exporter = yield* factory.create(factory.defaultConfig, { ...settings, id: "stdout" })
      output.stream.destroy()

      yield* exporter.export(addedEvents(4))
      yield* exporter.flush("5 seconds")

      assert.deepStrictEqual(yield* exporter.stats, { sent: 0, failed: 4, retried: 0, dropped: 4, queued: 0 })
      assert.deepStrictEqual(yield* exporter.health, { healthy: false, message: "output stream is closed" })
    }),
  )

  describe("config section", () => {
    it("has defaults for every key and accepts an empty or absent section", () => {
      const defaults = StdoutExporter.factory.defaultConfig
      assert.strictEqual(defaults.queueSize, 10_000)
      assert.strictEqual(defaults.batchSize, 500)
      assert.strictEqual(Duration.toMillis(defaults.writeTimeout), 5_000)
      assert.strictEqual(defaults.retry.maxAttempts, 0)
      assert.strictEqual(defaults.retry.multiplier, 1.5)
      assert.strictEqual(defaults.retry.randomizationFactor, 0.5)
      assert.strictEqual(Duration.toMillis(defaults.retry.initialInterval), 1_000)
      assert.strictEqual(Duration.toMillis(defaults.retry.maxInterval), 30_000)
      assert.strictEqual(Duration.toMillis(defaults.retry.maxElapsed), 120_000)
      for (const section of [undefined, null, {}]) {
        assert.deepStrictEqual(StdoutExporter.factory.validate(section), Result.succeed(defaults))
      }
    })

    it("reads Go durations and milliseconds", () => {
      const outcome = StdoutExporter.factory.validate({
        queueSize: 100,
        batchSize: 10,
        writeTimeout: "1m30s",
        retry: { initialInterval: 250, maxInterval: "1.5s", maxElapsed: "1h", multiplier: 2, randomizationFactor: 0 },
      })
      assert.isTrue(Result.isSuccess(outcome))
      if (Result.isSuccess(outcome)) {
        assert.strictEqual(Duration.toMillis(outcome.success.writeTimeout), 90_000)
        assert.strictEqual(Duration.toMillis(outcome.success.retry.initialInterval), 250)
        assert.strictEqual(Duration.toMillis(outcome.success.retry.maxInterval), 1_500)
        assert.strictEqual(Duration.toMillis(outcome.success.retry.maxElapsed), 3_600_000)
        assert.strictEqual(outcome.success.retry.maxAttempts, 0)
        assert.strictEqual(outcome.success.retry.multiplier, 2)
        assert.strictEqual(outcome.success.retry.randomizationFactor, 0)
      }
    })

    it("reports every problem at once, with keys relative to the section", () => {
      const problems = problemsOf({
        queueSize: 0,
        batchSize: 2.5,
        writeTimeout: "soon",
        retry: { maxAttempts: "three", maxElapsed: -1, jitter: true, multiplier: 0.5, randomizationFactor: 1.5 },
        format: "json",
      })
      assert.deepStrictEqual(problems.map((problem) => problem.key).sort(), [
        "batchSize",
        "format",
        "queueSize",
        "retry.jitter",
        "retry.maxAttempts",
        "retry.maxElapsed",
        "retry.multiplier",
        "retry.randomizationFactor",
        "writeTimeout",
      ])
      assert.deepInclude(problems, { key: "format", message: "unknown key" })
      assert.deepInclude(problems, { key: "queueSize", message: "queue size must be a positive integer" })
      const messageOf = (key: string) => problems.find((problem) => problem.key === key)?.message ?? ""
      assert.include(messageOf("batchSize"), "batch size must be an integer")
      assert.include(messageOf("retry.maxAttempts"), "retry max attempts must be an integer")
      assert.include(messageOf("retry.multiplier"), "retry multiplier must be between 1 and 10")
      assert.include(messageOf("retry.randomizationFactor"), "retry randomization factor must be between 0 and 1")
      assert.include(messageOf("writeTimeout"), "write timeout must be")
    })

    it("rejects a batch larger than the queue and a first retry interval above the maximum", () => {
      assert.deepStrictEqual(problemsOf({ queueSize: 10, batchSize: 20 }), [
        { key: "batchSize", message: "batch size must not exceed queueSize" },
      ])
      assert.deepStrictEqual(problemsOf({ retry: { initialInterval: "1m", maxInterval: "10s" } }), [
        { key: "retry.initialInterval", message: "retry initial interval must not be longer than retry.maxInterval" },
      ])
    })

    it("rejects values beyond the ranges of the configuration reference", () => {
      assert.deepStrictEqual(
        problemsOf({ queueSize: 2_000_000, batchSize: 10, writeTimeout: "2h", retry: { maxElapsed: "720h" } }),
        [
          { key: "queueSize", message: "queue size must be between 1 and 1000000, got 2000000" },
          { key: "writeTimeout", message: "write timeout must be between 1ms and 1h, got 2h" },
          { key: "retry.maxElapsed", message: "retry max elapsed must be between 1ms and 24h, got 720h" },
        ],
      )
    })

    it("rejects a section that is not a mapping", () => {
      assert.deepStrictEqual(problemsOf("stdout"), [{ key: "", message: "must be a mapping" }])
      assert.deepStrictEqual(problemsOf({ retry: 3 }), [{ key: "retry", message: "must be a mapping" }])
    })
  })
})
