import { Duration, Result } from "effect"
import { describe, expect, it } from "vitest"
import { defaultQueueSettings } from "../../../src/exporter/exporterhelper/QueueSettings.ts"
import { decodeNatsExporterConfig, decodeOtlpExporterConfig } from "../../config/ComponentDecoders.ts"
import { configOf, problemsOf } from "../../config/ResolveFixture.ts"

const lines = (...text: ReadonlyArray<string>): string => `${text.join("\n")}\n`

const sectionOf = (file: string, id: string): unknown =>
  configOf({ file }).exporters.find((exporter) => exporter.id === id)?.section

describe("queue settings of the otlp and nats sections", () => {
  it("reach the typed config from the file, the other keys keeping the stdout defaults", () => {
    const file = lines(
      "cluster: { name: c }",
      "exporters:",
      "  nats: { queueSize: 50, batchSize: 10, retry: { maxAttempts: 3, initialInterval: 200ms } }",
      "  otlp: { queueSize: 50, batchSize: 20, writeTimeout: 15s, retry: { maxElapsed: 5m } }",
      "service: { pipelines: { gpus: { exporters: [nats, otlp] } } }",
    )
    const nats = Result.getOrThrow(decodeNatsExporterConfig(sectionOf(file, "nats")))
    expect(nats.queue).toEqual({
      ...defaultQueueSettings,
      queueSize: 50,
      batchSize: 10,
      retry: { ...defaultQueueSettings.retry, maxAttempts: 3, initialInterval: Duration.millis(200) },
    })
    const otlp = Result.getOrThrow(decodeOtlpExporterConfig(sectionOf(file, "otlp")))
    expect(otlp.queue).toEqual({
      ...defaultQueueSettings,
      queueSize: 50,
      batchSize: 20,
      writeTimeout: Duration.seconds(15),
      retry: { ...defaultQueueSettings.retry, maxElapsed: Duration.minutes(5) },
    })
  })

  it("reports bad values under their dotted keys", () => {
    const file = lines(
      "cluster: { name: c }",
      "exporters:",
      "  nats: { queueSize: 0, writeTimeout: soon, retry: { maxAttempts: -1, maxElapsed: 0s, multiplier: 0.5, randomizationFactor: 2 } }",
      "  otlp/east: { queueSize: 10, batchSize: 20, retry: { initialInterval: 1m, maxInterval: 10s } }",
      "service: { pipelines: { gpus: { exporters: [nats, otlp/east] } } }",
    )
    expect(problemsOf({ file })).toEqual([
      { key: "exporters.nats.queueSize", message: "queue size must be a positive integer" },
      { key: "exporters.nats.retry.maxAttempts", message: "retry max attempts must be 0 or a positive integer" },
      { key: "exporters.nats.retry.maxElapsed", message: "retry max elapsed must be a positive duration" },
      { key: "exporters.nats.retry.multiplier", message: "retry multiplier must be between 1 and 10, got 0.5" },
      {
        key: "exporters.nats.retry.randomizationFactor",
        message: "retry randomization factor must be between 0 and 1, got 2",
      },
      {
        key: "exporters.nats.writeTimeout",
        message: expect.stringMatching(/^write timeout must be a duration such as 30s/),
      },
      { key: "exporters.otlp/east.batchSize", message: "batch size must not exceed queueSize" },
      {
        key: "exporters.otlp/east.retry.initialInterval",
        message: "retry initial interval must not be longer than retry.maxInterval",
      },
    ])
  })

  it("are checked by the factories' validation with keys relative to the section", () => {
    expect(Result.isFailure(decodeOtlpExporterConfig({ batchSize: 20_000 }))).toBe(true)
    const decoded = decodeNatsExporterConfig({ queueSize: "x" })
    expect(Result.isFailure(decoded) ? decoded.failure.map((problem) => problem.key) : []).toEqual(["queueSize"])
  })
})

describe("stream settings of the nats section", () => {
  it("come from the environment, the flag and the file", () => {
    const config = configOf({
      file: lines("cluster: { name: c }", "exporters:", "  nats: { stream: GPUS, maxAge: 72h }"),
      env: { EXPORTER_TYPE: "nats", NATS_STREAM_DUPLICATE_WINDOW: "5m", NATS_STREAM_RETENTION: "interest" },
      argv: ["--no-nats-stream-create"],
    })
    const nats = Result.getOrThrow(decodeNatsExporterConfig(config.exporters[0]?.section))
    expect(nats.streamSettings).toEqual({
      create: false,
      duplicateWindowMs: 300_000,
      retention: "interest",
      maxAgeMs: 72 * 3_600_000,
      maxBytes: 1024 * 1024 * 1024,
    })
  })

  it("reject a zero window, a negative age, an unknown retention and a window longer than the age", () => {
    const env = { CLUSTER_NAME: "c", EXPORTER_TYPE: "nats" }
    expect(
      problemsOf({
        env: { ...env, NATS_STREAM_DUPLICATE_WINDOW: "0s", NATS_STREAM_MAX_AGE: "-1s", NATS_STREAM_RETENTION: "all" },
      }),
    ).toEqual([
      { key: "NATS_STREAM_DUPLICATE_WINDOW", message: "NATS stream duplicate window must be > 0" },
      { key: "NATS_STREAM_MAX_AGE", message: "NATS stream max age must be >= 0 (0 keeps messages forever)" },
      {
        key: "NATS_STREAM_RETENTION",
        message: 'NATS stream retention must be one of limits, interest, workqueue, got "all"',
      },
    ])
    expect(problemsOf({ env: { ...env, NATS_STREAM_MAX_AGE: "1m" } })).toEqual([
      {
        key: "NATS_STREAM_DUPLICATE_WINDOW",
        message: "NATS stream duplicate window must not be longer than the stream's max age",
      },
    ])
  })
})
