import { assert, describe, it } from "@effect/vitest"
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics"
import { Effect, Exit, Scope } from "effect"
import { HealthServer } from "../../src/telemetry/HealthServer.ts"
import { execDurationBuckets, metricNames } from "../../src/telemetry/OtelServiceMetrics.ts"
import { ServiceMeter } from "../../src/telemetry/ServiceMeter.ts"
import { ServiceMetrics } from "../../src/telemetry/ServiceMetrics.ts"
import { probe } from "./HttpProbe.ts"
import { labelSets, parseSamples, type Sample, samplesOf } from "./PrometheusText.ts"
import { checkMetrics } from "./Promtool.ts"
import { meterOptions, telemetryLayer } from "./TelemetryLayers.ts"

const lastReading = new Date("2026-03-01T12:00:00.000Z")

/** A few of everything a running service records. */
const recordSomeOfEach = Effect.gen(function* () {
  const metrics = yield* ServiceMetrics
  yield* metrics.readingFinished({ result: "ok" })
  yield* metrics.readingFinished({ result: "ok" })
  yield* metrics.readingFinished({ result: "partial", errorKind: "device_handle" })
  yield* metrics.readingFinished({ result: "failed", errorKind: "no_devices" })
  yield* metrics.execFinished(0.3, "ok")
  yield* metrics.execFinished(42, "timeout")
  yield* metrics.readingSucceededAt(lastReading)
  yield* metrics.workQueueRetried
  yield* metrics.workQueueRetried
  yield* metrics.workQueueGaveUp("permanent")
  yield* metrics.informerRestarted("pods")
  yield* metrics.inventoryEvents("added", 16)
  yield* metrics.inventoryEvents("moved", 0)
  yield* metrics.leaderChanged(true)
  yield* metrics.observeWorkQueueDepth(() => 7)
  yield* metrics.nodeLabelPatched("ok")
  yield* metrics.nodeLabelPatched("failed")
  yield* metrics.nodeLabelValueSkipped("serial")
  yield* metrics.observeNodesToLabel(() => 3)
  yield* metrics.observeFailingNodes(() => new Map([["driver-not-loaded", 1]]))
  yield* metrics.observeInventory(() => ({
    gpus: 12,
    nodes: 2,
    gpusByModel: { "NVIDIA H100 80GB HBM3": 8, "NVIDIA GB200": 4 },
  }))
  yield* metrics.exporterStats({
    stdout: { sent: 16, failed: 0, retried: 0, dropped: 0, queued: 0 },
    nats: { sent: 10, failed: 3, retried: 2, dropped: 1, queued: 5 },
  })
  yield* metrics.exportWritten("stdout", 0.0004, true)
  yield* metrics.exportWritten("nats", 1.5, false)
})

const scrape = Effect.gen(function* () {
  const { port } = yield* HealthServer
  const answer = yield* probe(port, "/metrics")
  assert.strictEqual(answer.status, 200)
  assert.include(answer.contentType ?? "", "text/plain")
  return answer.body
})

const seriesValue = (samples: ReadonlyArray<Sample>, name: string, labels: Readonly<Record<string, string>> = {}) => {
  const matching = samplesOf(samples, name, labels)
  assert.lengthOf(matching, 1, `${name} ${JSON.stringify(labels)}`)
  return matching[0]?.value
}

/** Every label the service's own series may carry; none of them names a pod or a node. */
const allowedLabels = new Set([
  "result",
  "label",
  "error_kind",
  "exporter",
  "outcome",
  "reason",
  "model",
  "kind",
  "resource",
  "leading",
  "le",
])

describe("OtelServiceMetrics", () => {
  it.live("serves every instrument on /metrics as text that promtool accepts", () =>
    Effect.gen(function* () {
      yield* recordSomeOfEach
      const exposition = yield* scrape

      const verdict = yield* Effect.promise(() => checkMetrics(exposition))
      assert.deepStrictEqual(verdict.problems, [])
      assert.strictEqual(verdict.exitCode, 0)

      assert.include(exposition, `# TYPE ${metricNames.readings} counter`)
      assert.include(exposition, `# TYPE ${metricNames.execDuration} histogram`)
      assert.include(exposition, `# TYPE ${metricNames.leader} gauge`)
      assert.include(exposition, `# TYPE ${metricNames.exportRecordsSent} counter`)
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("exports each series with its bounded label set", () =>
    Effect.gen(function* () {
      yield* recordSomeOfEach
      const samples = parseSamples(yield* scrape)

      assert.strictEqual(seriesValue(samples, metricNames.readings, { result: "ok" }), 2)
      assert.strictEqual(
        seriesValue(samples, metricNames.readings, { result: "partial", error_kind: "device_handle" }),
        1,
      )
      assert.strictEqual(seriesValue(samples, metricNames.readings, { result: "failed", error_kind: "no_devices" }), 1)
      assert.sameMembers([...labelSets(samples, metricNames.readings)], ["result", "error_kind,result"])

      const buckets = samplesOf(samples, `${metricNames.execDuration}_bucket`, { result: "ok" })
      assert.deepStrictEqual(
        buckets.map((bucket) => bucket.labels.le),
        [...execDurationBuckets.map(String), "+Inf"],
      )
      assert.strictEqual(seriesValue(samples, `${metricNames.execDuration}_bucket`, { result: "ok", le: "0.25" }), 0)
      assert.strictEqual(seriesValue(samples, `${metricNames.execDuration}_bucket`, { result: "ok", le: "0.5" }), 1)
      assert.strictEqual(seriesValue(samples, `${metricNames.execDuration}_bucket`, { result: "timeout", le: "30" }), 0)
      assert.strictEqual(seriesValue(samples, `${metricNames.execDuration}_count`, { result: "timeout" }), 1)
      assert.strictEqual(seriesValue(samples, `${metricNames.execDuration}_sum`, { result: "timeout" }), 42)

      assert.strictEqual(seriesValue(samples, metricNames.lastSuccessfulReading), lastReading.getTime() / 1000)
      assert.strictEqual(seriesValue(samples, metricNames.workQueueDepth), 7)
      assert.strictEqual(seriesValue(samples, metricNames.workQueueRetries), 2)
      assert.strictEqual(seriesValue(samples, metricNames.workQueueGiveUps, { reason: "permanent" }), 1)
      assert.strictEqual(seriesValue(samples, metricNames.informerRestarts, { resource: "pods" }), 1)
      assert.strictEqual(seriesValue(samples, metricNames.informerRestarts, { resource: "nodes" }), 0)
      assert.strictEqual(seriesValue(samples, metricNames.inventoryEvents, { kind: "added" }), 16)
      assert.strictEqual(seriesValue(samples, metricNames.inventoryEvents, { kind: "moved" }), 0)
      assert.strictEqual(seriesValue(samples, metricNames.leader), 1)
      assert.strictEqual(seriesValue(samples, metricNames.leaderChanges, { leading: "true" }), 1)
      assert.strictEqual(seriesValue(samples, metricNames.leaderChanges, { leading: "false" }), 0)
      assert.strictEqual(seriesValue(samples, metricNames.nodeLabelPatches, { result: "ok" }), 1)
      assert.strictEqual(seriesValue(samples, metricNames.nodeLabelPatches, { result: "failed" }), 1)
      assert.strictEqual(seriesValue(samples, metricNames.nodeLabelPatches, { result: "node-gone" }), 0)
      assert.strictEqual(seriesValue(samples, metricNames.nodeLabelValuesSkipped, { label: "serial" }), 1)
      assert.strictEqual(seriesValue(samples, metricNames.nodeLabelValuesSkipped, { label: "chassis" }), 0)
      assert.strictEqual(seriesValue(samples, metricNames.nodesToLabel), 3)
      assert.strictEqual(seriesValue(samples, metricNames.gpusKnown), 12)
      assert.strictEqual(seriesValue(samples, metricNames.nodesKnown), 2)
      assert.strictEqual(seriesValue(samples, metricNames.nodesFailing, { error_kind: "driver-not-loaded" }), 1)
      assert.strictEqual(seriesValue(samples, metricNames.gpusKnownByModel, { model: "NVIDIA H100 80GB HBM3" }), 8)
      assert.strictEqual(seriesValue(samples, metricNames.gpusKnownByModel, { model: "NVIDIA GB200" }), 4)

      assert.strictEqual(seriesValue(samples, metricNames.exportRecordsSent, { exporter: "stdout" }), 16)
      assert.strictEqual(seriesValue(samples, metricNames.exportRecordsSent, { exporter: "nats" }), 10)
      assert.strictEqual(seriesValue(samples, metricNames.exportRecordsFailed, { exporter: "nats" }), 3)
      assert.strictEqual(seriesValue(samples, metricNames.exportRecordsRetried, { exporter: "nats" }), 2)
      assert.strictEqual(seriesValue(samples, metricNames.exportRecordsDropped, { exporter: "nats" }), 1)
      assert.strictEqual(seriesValue(samples, metricNames.exportQueuedRecords, { exporter: "nats" }), 5)
      assert.strictEqual(
        seriesValue(samples, `${metricNames.exportWriteDuration}_count`, { exporter: "stdout", outcome: "ok" }),
        1,
      )
      assert.strictEqual(
        seriesValue(samples, `${metricNames.exportWriteDuration}_count`, { exporter: "nats", outcome: "error" }),
        1,
      )

      const target = samplesOf(samples, "target_info")
      assert.lengthOf(target, 1)
      assert.strictEqual(target[0]?.labels.service_name, "gpu-serials")
      assert.strictEqual(target[0]?.labels.service_version, meterOptions.serviceVersion)
      assert.strictEqual(target[0]?.labels.service_instance_id, meterOptions.serviceInstanceId)

      for (const sample of samples.filter((each) => each.name.startsWith("gpu_serials_"))) {
        for (const label of Object.keys(sample.labels))
          assert.isTrue(allowedLabels.has(label), `${sample.name}: ${label}`)
      }
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("keeps one series per error kind however many nodes fail with it", () =>
    Effect.gen(function* () {
      const metrics = yield* ServiceMetrics
      for (let node = 0; node < 300; node++)
        yield* metrics.readingFinished({ result: "failed", errorKind: "no_devices" })
      const before = samplesOf(parseSamples(yield* scrape), metricNames.readings)
      assert.strictEqual(seriesValue(before, metricNames.readings, { result: "failed", error_kind: "no_devices" }), 300)

      // A caller that passes something per node (here a raw node name) still cannot grow the label without bound.
      for (let node = 0; node < 500; node++) {
        yield* metrics.readingFinished({ result: "failed", errorKind: `exec failed on gpu-node-${node}` })
      }
      const after = samplesOf(parseSamples(yield* scrape), metricNames.readings, { result: "failed" })
      assert.isAtMost(after.length, 65)
      const overflow = after.find((sample) => sample.labels.error_kind === "other")
      assert.isDefined(overflow)
      assert.strictEqual(
        after.reduce((total, sample) => total + sample.value, 0),
        800,
      )
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("counts failing nodes by bounded error kind, a recovered kind showing 0", () =>
    Effect.gen(function* () {
      const metrics = yield* ServiceMetrics
      let failing = new Map([
        ["driver-not-loaded", 2],
        ["exec-forbidden", 1],
      ])
      yield* metrics.observeFailingNodes(() => failing)
      const first = parseSamples(yield* scrape)
      assert.strictEqual(seriesValue(first, metricNames.nodesFailing, { error_kind: "driver-not-loaded" }), 2)
      assert.strictEqual(seriesValue(first, metricNames.nodesFailing, { error_kind: "exec-forbidden" }), 1)

      failing = new Map([["driver-not-loaded", 1]])
      const second = parseSamples(yield* scrape)
      assert.strictEqual(seriesValue(second, metricNames.nodesFailing, { error_kind: "driver-not-loaded" }), 1)
      assert.strictEqual(seriesValue(second, metricNames.nodesFailing, { error_kind: "exec-forbidden" }), 0)

      failing = new Map(Array.from({ length: 200 }, (_, index) => [`kind-${index}`, 1]))
      const flood = samplesOf(parseSamples(yield* scrape), metricNames.nodesFailing)
      assert.isAtMost(flood.length, 65)
      assert.strictEqual(
        flood.reduce((total, sample) => total + sample.value, 0),
        200,
      )
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("feeds a reader attached after start, which exports a last time when its scope closes", () =>
    Effect.gen(function* () {
      const meter = yield* ServiceMeter
      const metrics = yield* ServiceMetrics
      const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
      const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
      const component = yield* Scope.make()
      yield* meter.attachReader(reader).pipe(Scope.provide(component))

      yield* metrics.inventoryEvents("added", 3)
      yield* Effect.promise(() => reader.forceFlush())
      const first = exporter.getMetrics()
      assert.lengthOf(first, 1)
      assert.strictEqual(first[0]?.resource.attributes["service.name"], "gpu-serials")
      const names = first[0]?.scopeMetrics.flatMap((scope) => scope.metrics.map((metric) => metric.descriptor.name))
      assert.include(names, metricNames.inventoryEvents)
      assert.include(names, metricNames.gpusKnown)

      yield* Scope.close(component, Exit.void)
      assert.lengthOf(exporter.getMetrics(), 2)
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("feeds the readers given at construction and shuts them down with the layer", () =>
    Effect.gen(function* () {
      const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
      const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
      yield* Effect.gen(function* () {
        const metrics = yield* ServiceMetrics
        yield* metrics.informerRestarted("nodes")
      }).pipe(Effect.provide(telemetryLayer({ meter: { ...meterOptions, readers: [reader] } })))

      const exported = exporter.getMetrics()
      assert.lengthOf(exported, 1)
      const restarts = exported[0]?.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .find((metric) => metric.descriptor.name === metricNames.informerRestarts)
      const nodes = restarts?.dataPoints.find((point) => point.attributes.resource === "nodes")
      assert.strictEqual(nodes?.value, 1)
    }),
  )
})
