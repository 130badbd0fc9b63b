import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import type { GpuHealth } from "../../../src/domain/GpuHealth.ts"
import type { GpuRecord } from "../../../src/domain/GpuRecord.ts"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import type { OtlpExporterConfig } from "../../../src/exporter/otlp/OtlpConfig.ts"
import * as OtlpExporter from "../../../src/exporter/otlp/OtlpExporter.ts"
import { gpuInfoLabels } from "../../../src/metrics/GpuInfoLabels.ts"
import * as ServiceInstruments from "../../../src/metrics/ServiceInstruments.ts"
import { ServiceMeter } from "../../../src/metrics/ServiceMeter.ts"
import { ServiceMetrics } from "../../../src/metrics/ServiceMetrics.ts"
import type { Exporter } from "../../../src/pipeline/Exporter.ts"
import { capturedLog } from "../../log/CapturedLog.ts"
import { addedEvent, addedEvents } from "../InventoryEvents.ts"
import { decodeJsonLogsRequest } from "./JsonLogsRequest.ts"
import { type OtlpReceiver, startOtlpReceiver } from "./OtlpReceiver.ts"
import { type DecodedResourceLogs, type DecodedValue, decodeLogsRequest } from "./ProtobufLogsRequest.ts"

const settings = { id: "otlp", clusterName: "prod-eu", serviceVersion: "1.2.3" }

const configFor = (receiver: OtlpReceiver, overrides: Partial<OtlpExporterConfig> = {}): OtlpExporterConfig => ({
  ...OtlpExporter.factory.defaultConfig,
  endpoint: receiver.url,
  metricsIntervalMs: 0,
  ...overrides,
})

/** Polls until `check` holds; the test's own timeout bounds the wait. */
const eventually = <A>(read: Effect.Effect<A>, check: (value: A) => boolean): Effect.Effect<A> =>
  Effect.gen(function* () {
    for (;;) {
      const value = yield* read
      if (check(value)) return value
      yield* Effect.sleep("20 millis")
    }
  })

const sentAll = (exporter: Exporter, count: number) => eventually(exporter.stats, (stats) => stats.sent === count)

const logsOf = (receiver: OtlpReceiver): ReadonlyArray<DecodedResourceLogs> =>
  receiver.accepted("/v1/logs").flatMap((request) => decodeLogsRequest(request.body))

const str = (value: string): DecodedValue => ({ string: value })

const movedEvent: InventoryEvent = {
  record: {
    ...addedEvent(7).record,
    event: "moved",
    node: "gpu-node-8",
    machine: "i-0def",
    chassis: "1821923000123",
    moduleId: 3,
    migMode: "Disabled",
    previousNode: "gpu-node-7",
    previousMachine: "i-0abc",
    serialShared: true,
  },
  origin: { nodeUid: "uid-8", podNamespace: "gpu-operator", podName: "nvidia-device-plugin-8" },
}

describe("otlp exporter", () => {
  it.live("sends one ResourceLogs per node with the node's resource attributes", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver
      const exporter = yield* OtlpExporter.factory.create(
        configFor(receiver, {
          resourceAttributes: { "deployment.environment.name": "prod", "service.name": "ignored" },
        }),
        settings,
      )
      const [a, b] = [addedEvent(1), addedEvent(2)]
      yield* exporter.export([a, b, addedEvent(1)])
      yield* sentAll(exporter, 3)

      const resources = logsOf(receiver)
      assert.strictEqual(receiver.accepted("/v1/logs").length, 1)
      assert.strictEqual(resources.length, 2)
      for (const [n, count] of [
        [1, 2],
        [2, 1],
      ] as const) {
        const logs = resources.find(
          (candidate) =>
            (candidate.resourceAttributes.get("k8s.node.name") as { string: string }).string === `gpu-node-${n}`,
        )
        assert.isDefined(logs)
        assert.strictEqual(logs?.logRecords.length, count)
        const attributes = Object.fromEntries(logs?.resourceAttributes ?? [])
        assert.deepStrictEqual(attributes["service.name"], str("gpu-serials"))
        assert.deepStrictEqual(attributes["service.version"], str("1.2.3"))
        assert.isDefined(attributes["service.instance.id"])
        assert.deepStrictEqual(attributes["k8s.cluster.name"], str("prod-eu"))
        assert.deepStrictEqual(attributes["k8s.node.uid"], str(`uid-${n}`))
        assert.deepStrictEqual(attributes["host.id"], str("i-0abc"))
        assert.deepStrictEqual(attributes["cloud.provider"], str("aws"))
        assert.deepStrictEqual(attributes["deployment.environment.name"], str("prod"))
        assert.deepStrictEqual(logs?.scopeNames, ["gpu-serials/inventory"])
      }
      assert.strictEqual(receiver.requests[0]?.headers["content-type"], "application/x-protobuf")
    }).pipe(Effect.scoped),
  )

  it.live("names and types every record attribute as documented, with EventName, severity and body", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver
      const exporter = yield* OtlpExporter.factory.create(configFor(receiver), settings)
      const removed: InventoryEvent = { ...addedEvent(3), record: { ...addedEvent(3).record, event: "removed" } }
      yield* exporter.export([addedEvent(1), movedEvent, removed])
      yield* sentAll(exporter, 3)

      const records = logsOf(receiver).flatMap((logs) => logs.logRecords)
      const added = records.find((record) => record.eventName === "gpu.inventory.added")
      const moved = records.find((record) => record.eventName === "gpu.inventory.moved")
      const gone = records.find((record) => record.eventName === "gpu.inventory.removed")
      assert.deepStrictEqual(
        [added?.severityNumber, added?.severityText, moved?.severityNumber, moved?.severityText, gone?.severityNumber],
        [9, "INFO", 13, "WARN", 13],
      )
      const serial = addedEvent(1).record.gpu
      const uuid = addedEvent(1).record.uuid
      assert.deepStrictEqual(added?.body, str(`GPU ${serial} (${uuid}) added on gpu-node-1`))
      assert.deepStrictEqual(added?.timeUnixNano, BigInt(Date.parse("2025-06-01T12:00:00.000Z")) * 1_000_000n)
      assert.isTrue((added?.observedTimeUnixNano ?? 0n) > 0n)
      assert.deepStrictEqual(Object.fromEntries(added?.attributes ?? []), {
        "hw.id": str(uuid),
        "hw.type": str("gpu"),
        "hw.vendor": str("NVIDIA"),
        "hw.model": str("NVIDIA H100 80GB HBM3"),
        "hw.serial_number": str(serial),
        "k8s.pod.name": str("nvidia-device-plugin-x2k9q"),
        "k8s.namespace.name": str("gpu-operator"),
        "nvidia.gpu.index": { int: 1n },
        "nvidia.gpu.pci_bus_id": str("00000000:1B:00.0"),
        "nvidia.gpu.driver_version": str("570.148.08"),
        "nvidia.gpu.cuda_version": str("12.8"),
        "nvidia.gpu.serial_shared": { bool: false },
        "gpu_serials.event.id": str("id-1"),
      })
      const movedAttributes = Object.fromEntries(moved?.attributes ?? [])
      assert.deepStrictEqual(movedAttributes["hw.parent"], str("1821923000123"))
      assert.deepStrictEqual(movedAttributes["nvidia.gpu.module_id"], { int: 3n })
      assert.deepStrictEqual(movedAttributes["nvidia.gpu.mig_mode"], str("Disabled"))
      assert.deepStrictEqual(movedAttributes["nvidia.gpu.serial_shared"], { bool: true })
      assert.deepStrictEqual(movedAttributes["gpu_serials.previous.k8s.node.name"], str("gpu-node-7"))
      assert.deepStrictEqual(movedAttributes["gpu_serials.previous.host.id"], str("i-0abc"))
      assert.deepStrictEqual(
        moved?.body,
        str(`GPU ${movedEvent.record.gpu} (${movedEvent.record.uuid}) moved from gpu-node-7 to gpu-node-8`),
      )
    }).pipe(Effect.scoped),
  )

  it.live(
    "names a health change gpu.inventory.health, WARN when the GPU turns degraded and INFO back to ok, with the health as attributes",
    () =>
      Effect.gen(function* () {
        const receiver = yield* startOtlpReceiver
        const exporter = yield* OtlpExporter.factory.create(configFor(receiver), settings)
        const base = addedEvent(5)
        const health = (state: GpuHealth["state"], previous: GpuHealth["state"], reasons: ReadonlyArray<string>) => ({
          ...base,
          record: {
            ...base.record,
            event: "health" as const,
            id: `id-5-health-${state}`,
            health: {
              state,
              reasons,
              rmaEligible: false,
              remappedRows: { correctable: 0, uncorrectable: 1, pending: state !== "ok", failure: false },
              pcie: { linkWidth: { current: 16, max: 16 }, replays: 0 },
              clockEvents: ["hw-thermal-slowdown" as const],
              vbios: "96.00.99.00.01",
            },
            previousHealthState: previous,
          },
        })
        yield* exporter.export([health("degraded", "ok", ["row-remap-pending"]), health("ok", "degraded", [])])
        yield* sentAll(exporter, 2)

        const records = logsOf(receiver).flatMap((logs) => logs.logRecords)
        assert.deepStrictEqual(
          records.map((record) => [record.eventName, record.severityText, record.body]),
          [
            [
              "gpu.inventory.health",
              "WARN",
              str(`GPU ${base.record.gpu} (${base.record.uuid}) health degraded (row-remap-pending) on gpu-node-5`),
            ],
            [
              "gpu.inventory.health",
              "INFO",
              str(`GPU ${base.record.gpu} (${base.record.uuid}) health ok on gpu-node-5`),
            ],
          ],
        )
        const attributes = Object.fromEntries(
          [...(records[0]?.attributes ?? [])].filter(([key]) => key.startsWith("nvidia.gpu.health.")),
        )
        assert.deepStrictEqual(attributes, {
          "nvidia.gpu.health.state": str("degraded"),
          "nvidia.gpu.health.reasons": { array: [str("row-remap-pending")] },
          "nvidia.gpu.health.rma_eligible": { bool: false },
          "nvidia.gpu.health.remapped_rows.correctable": { int: 0n },
          "nvidia.gpu.health.remapped_rows.uncorrectable": { int: 1n },
          "nvidia.gpu.health.remapped_rows.pending": { bool: true },
          "nvidia.gpu.health.remapped_rows.failure": { bool: false },
          "nvidia.gpu.health.pcie.link_width.current": { int: 16n },
          "nvidia.gpu.health.pcie.link_width.max": { int: 16n },
          "nvidia.gpu.health.pcie.replays": { int: 0n },
          "nvidia.gpu.health.clock_events": { array: [str("hw-thermal-slowdown")] },
          "nvidia.gpu.health.vbios": str("96.00.99.00.01"),
          "nvidia.gpu.health.previous_state": str("ok"),
        })
        const back = Object.fromEntries(records[1]?.attributes ?? [])
        assert.deepStrictEqual(back["nvidia.gpu.health.reasons"], { array: [] })
        assert.deepStrictEqual(back["nvidia.gpu.health.previous_state"], str("degraded"))
      }).pipe(Effect.scoped),
  )

  it.live("sends OTLP/JSON when asked, with the same content", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver
      const exporter = yield* OtlpExporter.factory.create(configFor(receiver, { protocol: "http/json" }), settings)
      yield* exporter.export([addedEvent(1), movedEvent])
      yield* sentAll(exporter, 2)

      const request = receiver.accepted("/v1/logs")[0]
      assert.strictEqual(request?.headers["content-type"], "application/json")
      const resources = decodeJsonLogsRequest(request?.body ?? new Uint8Array())
      assert.strictEqual(resources.length, 2)
      const moved = resources.flatMap((logs) => logs.logRecords).find((r) => r.eventName === "gpu.inventory.moved")
      assert.strictEqual(moved?.severityText, "WARN")
      assert.deepStrictEqual(moved?.attributes.get("nvidia.gpu.index"), { int: 7n })
      assert.deepStrictEqual(moved?.attributes.get("hw.id"), str(movedEvent.record.uuid))
    }).pipe(Effect.scoped),
  )

  it.live("gzips the request when compression is gzip", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver
      const exporter = yield* OtlpExporter.factory.create(
        configFor(receiver, { compression: "gzip", headers: { authorization: "Bearer t0ken" } }),
        settings,
      )
      yield* exporter.export(addedEvents(5))
      yield* sentAll(exporter, 5)

      const request = receiver.accepted("/v1/logs")[0]
      assert.strictEqual(request?.headers["content-encoding"], "gzip")
      assert.strictEqual(request?.headers.authorization, "Bearer t0ken")
      assert.strictEqual(logsOf(receiver).flatMap((logs) => logs.logRecords).length, 5)
    }).pipe(Effect.scoped),
  )

  it.live("retries after 503 with Retry-After and loses nothing once the receiver recovers", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver
      receiver.script([
        { status: 503, headers: { "retry-after": "1" } },
        { status: 429, headers: { "retry-after": "0" } },
      ])
      const log = capturedLog()
      const exporter = yield* OtlpExporter.factory.create(configFor(receiver), settings).pipe(Effect.provide(log.layer))
      const events = addedEvents(40)
      yield* exporter.export(events)
      const failing = yield* eventually(exporter.health, (health) => !health.healthy)
      assert.include(failing.message ?? "", "503")
      const stats = yield* sentAll(exporter, 40)

      assert.strictEqual(stats.dropped, 0)
      assert.isTrue(stats.retried >= 40)
      const uuids = new Set(
        logsOf(receiver).flatMap((logs) =>
          logs.logRecords.map((record) => (record.attributes.get("hw.id") as { string: string }).string),
        ),
      )
      assert.deepStrictEqual(uuids, new Set(events.map((event) => event.record.uuid)))
      assert.deepStrictEqual(yield* exporter.health, { healthy: true })
      assert.deepStrictEqual(
        log.events().map((event) => event.msg),
        ["exporter write failed, retrying", "exporter writes again"],
      )
    }).pipe(Effect.scoped),
  )

  it.live("drops a batch the receiver refuses for good, without retrying it", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver
      receiver.script([{ status: 400 }])
      const exporter = yield* OtlpExporter.factory.create(configFor(receiver), settings)
      yield* exporter.export(addedEvents(3))
      const stats = yield* eventually(exporter.stats, (current) => current.dropped === 3)
      assert.strictEqual(stats.retried, 0)
      assert.strictEqual(receiver.requests.length, 1)
      assert.include((yield* exporter.health).message ?? "", "400")
    }).pipe(Effect.scoped),
  )

  it.live("with the receiver down, holds at most the queue bound, counts drops and never blocks export", () =>
    Effect.gen(function* () {
      const down = yield* Effect.scoped(Effect.map(startOtlpReceiver, (receiver) => receiver.url))
      const exporter = yield* OtlpExporter.factory
        .create({ ...OtlpExporter.factory.defaultConfig, endpoint: down, metricsIntervalMs: 0 }, settings)
        .pipe(Effect.provide(capturedLog().layer))
      for (let round = 0; round < 3; round += 1) yield* exporter.export(addedEvents(6_000, round * 6_000))
      const stats = yield* exporter.stats
      assert.isAtMost(stats.queued, 10_000)
      assert.isAtLeast(stats.dropped, 8_000)
      assert.strictEqual(stats.sent, 0)
      const health = yield* eventually(exporter.health, (current) => !current.healthy)
      assert.match(health.message ?? "", /^OTLP request failed: .*, retrying for \d+s \(gives up after 2m\)$/)
    }).pipe(Effect.scoped),
  )

  it.live("holds the queue size its section sets", () =>
    Effect.gen(function* () {
      const down = yield* Effect.scoped(Effect.map(startOtlpReceiver, (receiver) => receiver.url))
      const config = Result.getOrThrow(
        OtlpExporter.factory.validate({ endpoint: down, metricsInterval: "0s", queueSize: 50, batchSize: 10 }),
      )
      const exporter = yield* OtlpExporter.factory.create(config, settings).pipe(Effect.provide(capturedLog().layer))
      yield* exporter.export(addedEvents(60))
      const stats = yield* exporter.stats
      assert.strictEqual(stats.dropped, 10)
      assert.strictEqual(stats.sent, 0)
    }).pipe(Effect.scoped),
  )

  it.live("pushes the service's metrics, its GPU info among them, and the fleet gauge over OTLP", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver
      const meter = yield* ServiceMeter
      const metrics = yield* ServiceMetrics
      meter.meterProvider.getMeter("test").createCounter("gpu_serials_test_marker_total").add(1)
      yield* metrics.observeGpus({ gpus: () => [addedEvent(1).record], fields: (record: GpuRecord) => record })
      const exporter = yield* OtlpExporter.factory.create(configFor(receiver, { metricsIntervalMs: 100 }), settings)
      yield* exporter.export([addedEvent(2)])
      const pushed = yield* eventually(
        Effect.sync(() =>
          receiver.accepted("/v1/metrics").map((request) => Buffer.from(request.body).toString("latin1")),
        ),
        (bodies) => bodies.some((body) => body.includes("gpu-node-2")),
      )
      const body = pushed.find((candidate) => candidate.includes("gpu-node-2")) ?? ""
      assert.strictEqual(receiver.accepted("/v1/metrics")[0]?.headers["content-type"], "application/x-protobuf")
      for (const expected of [
        "gpu_serials_gpu_info",
        addedEvent(1).record.uuid,
        "Hostname",
        "gpu_serials_gpus",
        "gpu_serials_test_marker_total",
      ]) {
        assert.include(body, expected)
      }
      // One gpu_serials_gpu_info, the service's: the exporter does not push its own beside it.
      assert.strictEqual(body.split("gpu_serials_gpu_info").length - 1, 1)
      assert.notInclude(body, addedEvent(2).record.uuid)
    }).pipe(Effect.scoped, Effect.provide(Layer.fresh(ServiceInstruments.layerWithMeter({ serviceVersion: "1.2.3" })))),
  )

  it.live("without a service meter, pushes GPU info with the service's labels from its own events", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver
      const exporter = yield* OtlpExporter.factory.create(configFor(receiver, { metricsIntervalMs: 100 }), settings)
      const removed: InventoryEvent = { ...addedEvent(2), record: { ...addedEvent(2).record, event: "removed" } }
      yield* exporter.export([addedEvent(1), addedEvent(2), removed])
      const pushed = yield* eventually(
        Effect.sync(() =>
          receiver.accepted("/v1/metrics").map((request) => Buffer.from(request.body).toString("latin1")),
        ),
        (bodies) => bodies.some((body) => body.includes(addedEvent(1).record.uuid)),
      )
      const body = pushed.find((candidate) => candidate.includes(addedEvent(1).record.uuid)) ?? ""
      const labels = gpuInfoLabels(addedEvent(1).record)
      for (const expected of ["gpu_serials_gpu_info", "gpu_serials_gpus", ...Object.keys(labels), labels.serial]) {
        assert.include(body, expected)
      }
      assert.notInclude(body, addedEvent(2).record.uuid)
    }).pipe(Effect.scoped),
  )

  it.live("says once in the log when metrics pushes start failing, and once when they work again", () => {
    const log = capturedLog()
    const messages = () => log.events().map((event) => `${event.level} ${event.msg}`)
    return Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver
      const meter = yield* ServiceMeter
      meter.meterProvider.getMeter("test").createCounter("gpu_serials_test_marker_total").add(1)
      receiver.outage({ status: 503 })
      // A short request deadline, so the SDK's own retries of a 503 give up within the test.
      yield* OtlpExporter.factory.create(configFor(receiver, { metricsIntervalMs: 100, timeoutMs: 300 }), settings)
      yield* eventually(Effect.sync(messages), (lines) =>
        lines.includes("warn OTLP metrics push failed; retried at the next interval"),
      )
      yield* eventually(
        Effect.sync(() => receiver.answered.filter((answer) => answer === 503).length),
        (refused) => refused >= 10,
      )
      receiver.outage(undefined)
      yield* eventually(Effect.sync(messages), (lines) => lines.includes("info OTLP metrics push works again"))
      const failed = log
        .events()
        .filter((event) => event.msg === "OTLP metrics push failed; retried at the next interval")
      assert.strictEqual(failed.length, 1)
      assert.strictEqual(failed[0]?.level, "warn")
      assert.include(String(failed[0]?.reason), "Export failed")
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.mergeAll(Layer.fresh(ServiceMeter.layer({ serviceVersion: "1.2.3" })), log.layer)),
    )
  })

  it.live("sends endpoint userinfo as Basic authorization, to the endpoint's path and with its query", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver
      const endpoint = `${receiver.url.replace("http://", "http://otlp%20user:p%40ss:w@")}/prefix/?token=t1`
      const exporter = yield* OtlpExporter.factory.create(
        configFor(receiver, { endpoint, metricsIntervalMs: 100 }),
        settings,
      )
      yield* exporter.export([addedEvent(1)])
      yield* sentAll(exporter, 1)
      const pushed = yield* eventually(
        Effect.sync(() => receiver.accepted("/prefix/v1/metrics?token=t1")),
        (requests) => requests.length > 0,
      )
      const [logs] = receiver.accepted("/prefix/v1/logs?token=t1")
      const basic = `Basic ${Buffer.from("otlp user:p@ss:w").toString("base64")}`
      assert.strictEqual(logs?.headers.authorization, basic)
      assert.strictEqual(pushed[0]?.headers.authorization, basic)
    }).pipe(Effect.scoped, Effect.provide(Layer.fresh(ServiceMeter.layer({ serviceVersion: "1.2.3" })))),
  )

  it.live("sends a configured Authorization header rather than the endpoint's userinfo", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver
      const exporter = yield* OtlpExporter.factory.create(
        configFor(receiver, {
          endpoint: receiver.url.replace("http://", "http://u:p@"),
          headers: { Authorization: "Bearer configured" },
        }),
        settings,
      )
      yield* exporter.export([addedEvent(1)])
      yield* sentAll(exporter, 1)
      assert.strictEqual(receiver.accepted("/v1/logs")[0]?.headers.authorization, "Bearer configured")
    }).pipe(Effect.scoped),
  )

  it("checks its section with the settings' rules", () => {
    assert.isTrue(Result.isSuccess(OtlpExporter.factory.validate({ endpoint: "http://collector:4318" })))
    const invalid = OtlpExporter.factory.validate({ endpoint: "collector:4318", protocol: "grpc" })
    assert.isTrue(Result.isFailure(invalid))
    assert.deepStrictEqual(Result.isFailure(invalid) ? invalid.failure.map((problem) => problem.key).sort() : [], [
      "endpoint",
      "protocol",
    ])
  })
})
