import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type OtlpReceiver, startOtlpReceiver } from "../exporter/otlp/OtlpReceiver.ts"
import { type DecodedLogRecord, type DecodedValue, decodeLogsRequest } from "../exporter/otlp/ProtobufLogsRequest.ts"
import { jsonLines, startGpuSerials } from "./GpuSerialsCli.ts"

/** Runs `gpu-serials demo` for a few seconds with stdout and otlp, entity events in `form`, into `receiver`. */
const demoInto = (receiver: OtlpReceiver, form: "legacy" | "spec") =>
  Effect.promise(async () => {
    const demo = startGpuSerials([
      "demo",
      "--duration",
      "6s",
      "--exporter",
      "stdout,otlp",
      "--otlp-endpoint",
      receiver.url,
      "--otlp-metrics-interval",
      "0",
      "--otlp-entity-events",
      form,
    ])
    const exit = await demo.exited
    return { code: exit.code, stdout: demo.stdout(), stderr: demo.stderr() }
  })

const records = (receiver: OtlpReceiver): ReadonlyArray<DecodedLogRecord> =>
  receiver
    .accepted("/v1/logs")
    .flatMap((request) => decodeLogsRequest(request.body))
    .flatMap((logs) => logs.logRecords)

/** The `hw.id` of an entity id map. */
const entityUuid = (id: DecodedValue | undefined): string | undefined => {
  if (id === undefined || !("kvlist" in id)) return undefined
  const uuid = id.kvlist.get("hw.id")
  return uuid !== undefined && "string" in uuid ? uuid.string : undefined
}

/** The UUIDs the demo announced as `added` on stdout. */
const addedUuids = (stdout: string): Array<string | undefined> =>
  jsonLines(stdout)
    .filter((record) => record.event === "added")
    .map((record) => String(record.uuid))
    .sort()

describe("gpu-serials demo with OpenTelemetry entity events", () => {
  it.live(
    "legacy: one entity_state per GPU, otel.entity.id holding its UUID",
    () =>
      Effect.gen(function* () {
        const receiver = yield* startOtlpReceiver
        const run = yield* demoInto(receiver, "legacy")
        assert.strictEqual(run.code, 0, run.stderr)
        const states = records(receiver).filter(
          (record) =>
            (record.attributes.get("otel.entity.event.type") as { string?: string })?.string === "entity_state",
        )
        const added = addedUuids(run.stdout)
        assert.isAbove(added.length, 20)
        assert.deepStrictEqual(
          states.map((record) => entityUuid(record.attributes.get("otel.entity.id"))).sort(),
          added,
        )
      }).pipe(Effect.scoped),
    60_000,
  )

  it.live(
    "spec: one entity.state per GPU, entity.id holding its UUID",
    () =>
      Effect.gen(function* () {
        const receiver = yield* startOtlpReceiver
        const run = yield* demoInto(receiver, "spec")
        assert.strictEqual(run.code, 0, run.stderr)
        const states = records(receiver).filter((record) => record.eventName === "entity.state")
        assert.deepStrictEqual(
          states.map((record) => entityUuid(record.attributes.get("entity.id"))).sort(),
          addedUuids(run.stdout),
        )
      }).pipe(Effect.scoped),
    60_000,
  )
})
