import { assert, describe, it } from "@effect/vitest"
import { Cause, Duration, Effect } from "effect"
import { afterEach, vi } from "vitest"
import { SinkError } from "../../src/exporter/exporterhelper/Sink.ts"
import * as JsonLogger from "../../src/log/JsonLogger.ts"

const captured = (level: JsonLogger.LogLevelName) => {
  const lines: Array<string> = []
  const layer = JsonLogger.layer({ level, output: { write: (line) => lines.push(line) } })
  const events = (): Array<Record<string, unknown>> => lines.map((line) => JSON.parse(line))
  return { lines, layer, events }
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe("JsonLogger", () => {
  it.effect("writes one JSON object per line with time, level and msg first", () =>
    Effect.gen(function* () {
      const log = captured("info")
      yield* Effect.logInfo("informer synced").pipe(
        Effect.annotateLogs({ pods: 12, namespace: "gpu-operator" }),
        Effect.provide(log.layer),
      )
      yield* Effect.logWarning("exporter buffer full, dropping records").pipe(Effect.provide(log.layer))

      assert.strictEqual(log.lines.length, 2)
      for (const line of log.lines) {
        assert.isTrue(line.endsWith("\n"))
        assert.strictEqual(line.indexOf("\n"), line.length - 1)
      }
      const [first, second] = log.events()
      assert.deepStrictEqual(Object.keys(first ?? {}), ["time", "level", "msg", "pods", "namespace"])
      assert.strictEqual(first?.level, "info")
      assert.strictEqual(first?.msg, "informer synced")
      assert.strictEqual(first?.pods, 12)
      assert.isFalse(Number.isNaN(Date.parse(String(first?.time))))
      assert.strictEqual(second?.level, "warn")
    }),
  )

  it.effect("renames annotations named like its own keys, the same way every time", () =>
    Effect.gen(function* () {
      const log = captured("debug")
      yield* Effect.logInfo("reading done").pipe(
        Effect.annotateLogs({ msg: "from annotation", level: "custom", "fields.msg": "taken", time: 3, node: "n1" }),
        Effect.provide(log.layer),
      )
      const [line = ""] = log.lines
      const event = JSON.parse(line)
      assert.strictEqual(event.msg, "reading done")
      assert.strictEqual(event.level, "info")
      assert.strictEqual(event["fields.msg"], "from annotation")
      assert.strictEqual(event["fields.level"], "custom")
      assert.strictEqual(event["fields.fields.msg"], "taken")
      assert.strictEqual(event["fields.time"], 3)
      assert.strictEqual(event.node, "n1")
      const keys = [...line.matchAll(/"([^"]+)":/g)].map((match) => match[1])
      assert.strictEqual(new Set(keys).size, keys.length)
    }),
  )

  it.effect("redacts the credentials and query values of every URL in a line: message, annotations, cause", () =>
    Effect.gen(function* () {
      const log = captured("info")
      yield* Effect.logWarning("retrying http://otlp:s3cr3t-a@collector:4318/v1/logs").pipe(
        Effect.annotateLogs({
          servers: "nats://u:s3cr3t-b@n1:4222,tls://s3cr3t-c@n2:4222",
          nested: { endpoint: "https://collector/?token=s3cr3t-d" },
        }),
        Effect.andThen(Effect.logError("export failed", Cause.fail(new Error("fetch https://s3cr3t-e@h/ failed")))),
        Effect.provide(log.layer),
      )
      const text = log.lines.join("")
      assert.notInclude(text, "s3cr3t")
      const [warning, failure] = log.events()
      assert.strictEqual(warning?.msg, "retrying http://<redacted>@collector:4318/v1/logs")
      assert.strictEqual(warning?.servers, "nats://<redacted>@n1:4222,tls://<redacted>@n2:4222")
      assert.deepStrictEqual(warning?.nested, { endpoint: "https://collector/?token=<redacted>" })
      assert.strictEqual(failure?.error, "Error: fetch https://<redacted>@h/ failed")
    }),
  )

  it.effect("filters by level", () =>
    Effect.gen(function* () {
      const program = Effect.gen(function* () {
        yield* Effect.logDebug("debug line")
        yield* Effect.logInfo("info line")
        yield* Effect.logWarning("warn line")
        yield* Effect.logError("error line")
      })
      const levels = (level: JsonLogger.LogLevelName) =>
        Effect.gen(function* () {
          const log = captured(level)
          yield* program.pipe(Effect.provide(log.layer))
          return log.events().map((event) => event.level)
        })

      assert.deepStrictEqual(yield* levels("debug"), ["debug", "info", "warn", "error"])
      assert.deepStrictEqual(yield* levels("info"), ["info", "warn", "error"])
      assert.deepStrictEqual(yield* levels("warn"), ["warn", "error"])
      assert.deepStrictEqual(yield* levels("error"), ["error"])
    }),
  )

  it.effect("renders a cause as a short error and caps long strings", () =>
    Effect.gen(function* () {
      const log = captured("info")
      const huge = `<nvidia_smi_log>${"<gpu>…</gpu>".repeat(10_000)}</nvidia_smi_log>`
      yield* Effect.logError("export failed", Cause.fail(new SinkError({ message: huge, retryable: false }))).pipe(
        Effect.annotateLogs({
          output: huge,
          timeout: Duration.seconds(5),
          nested: { deep: { deeper: { deepest: 1 } } },
        }),
        Effect.provide(log.layer),
      )
      yield* Effect.logWarning("worker crashed", Cause.die(new Error("socket hang up"))).pipe(Effect.provide(log.layer))

      const [failed, crashed] = log.events()
      assert.isString(failed?.error)
      assert.isTrue(String(failed?.error).startsWith("SinkError: <nvidia_smi_log>"))
      assert.isAtMost(String(failed?.error).length, JsonLogger.maxStringLength)
      assert.isAtMost(String(failed?.output).length, JsonLogger.maxStringLength)
      assert.strictEqual(failed?.timeout, "5s")
      assert.deepStrictEqual(failed?.nested, { deep: { deeper: "[…]" } })
      assert.isBelow(log.lines[0]?.length ?? Number.POSITIVE_INFINITY, 2_000)
      assert.strictEqual(crashed?.error, "Error: socket hang up")
    }),
  )

  it.effect("writes to stderr and never to stdout", () =>
    Effect.gen(function* () {
      const stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true)
      const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true)

      yield* Effect.logInfo("leader elected").pipe(Effect.provide(JsonLogger.layer({ level: "info" })))
      yield* Effect.logError("lease lost").pipe(Effect.provide(JsonLogger.layer({ level: "info" })))

      assert.strictEqual(stdout.mock.calls.length, 0)
      assert.strictEqual(stderr.mock.calls.length, 2)
      assert.strictEqual(JSON.parse(String(stderr.mock.calls[0]?.[0])).msg, "leader elected")
    }),
  )
})
