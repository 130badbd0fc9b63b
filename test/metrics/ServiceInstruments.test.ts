import { assert, describe, it } from "@effect/vitest"
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics"
import { Effect, Exit, Scope } from "effect"
import { HealthServer } from "../../src/health/HealthServer.ts"
import { type GpuInfoFields, gpuInfoLabels } from "../../src/metrics/GpuInfoLabels.ts"
import { execDurationBuckets, metricNames } from "../../src/metrics/ServiceInstruments.ts"
import { ServiceMeter } from "../../src/metrics/ServiceMeter.ts"
import { ServiceMetrics } from "../../src/metrics/ServiceMetrics.ts"
import { probe } from "../health/HttpProbe.ts"
import { labelSets, parseSamples, type Sample, samplesOf } from "./PrometheusText.ts"
import { acceptedByPromtool, checkMetrics, unexpectedProblems } from "./Promtool.ts"
import { meterOptions, telemetryLayer } from "./TelemetryLayers.ts"

const lastReading = new Date("2026-03-01T12:00:00.000Z")

/** The record fields of GPU `n` of a fleet: H100s, eight to a node, an NVL72 chassis for every other node. */
const fleetGpu = (n: number): GpuInfoFields => ({
  cluster: "prod-eu",
  node: `gpu-node-${Math.floor(n / 8)}`,
  uuid: `GPU-${n.toString(16).padStart(8, "0")}-1111-2222-3333-444444444444`,
  gpu: `0${1_650_000_000_000 + n}`,
  chassis: Math.floor(n / 8) % 2 === 0 ? "1821225190819" : "",
  product: "NVIDIA H100 80GB HBM3",
  pciBusId: `00000000:${(0x18 + (n % 8)).toString(16).toUpperCase()}:00.0`,
})

const fleet = (count: number, from = 0): ReadonlyArray<GpuInfoFields> =>
  Array.from({ length: count }, (_, offset) => fleetGpu(from + offset))

/** Reports `gpus` (read again at every scrape) as the inventory's GPUs. */
const observeFleet = (gpus: () => ReadonlyArray<GpuInfoFields>) =>
  Effect.gen(function* () {
    const metrics = yield* ServiceMetrics
    yield* metrics.observeGpus({ gpus, fields: (fields: GpuInfoFields) => fields })
  })

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
  yield* metrics.workQueueMayGiveUp(["permanent", "exec-timeout"])
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
  const gpus = fleet(12)
  yield* observeFleet(() => gpus)
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
  "state",
])

describe("ServiceInstruments", () => {
  it.live("serves every instrument on /metrics as text that promtool accepts", () =>
    Effect.gen(function* () {
      yield* recordSomeOfEach
      const exposition = yield* scrape

      const verdict = yield* Effect.promise(() => checkMetrics(exposition))
      assert.deepStrictEqual(unexpectedProblems(verdict), [])
      assert.isTrue(acceptedByPromtool(verdict))

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
      assert.strictEqual(seriesValue(samples, metricNames.workQueueGiveUps, { reason: "exec-timeout" }), 0)
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
        if (sample.name === metricNames.gpuInfo) continue
        for (const label of Object.keys(sample.labels))
          assert.isTrue(allowedLabels.has(label), `${sample.name}: ${label}`)
      }
      assert.deepStrictEqual(labelSets(samples, metricNames.gpuInfo), [
        "Hostname,UUID,chassis,cluster,modelName,pci_bus_id,serial",
      ])
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

  it.live("reports every GPU once in gpu_serials_gpu_info with DCGM's labels, so it joins DCGM's series on UUID", () =>
    Effect.gen(function* () {
      yield* observeFleet(() => fleet(16))
      const exposition = yield* scrape
      const info = samplesOf(parseSamples(exposition), metricNames.gpuInfo)
      assert.lengthOf(info, 16)
      assert.isTrue(info.every((sample) => sample.value === 1))
      assert.deepStrictEqual(
        info.find((sample) => sample.labels.UUID === fleetGpu(9).uuid)?.labels,
        gpuInfoLabels(fleetGpu(9)),
      )
      assert.include(exposition, `# TYPE ${metricNames.gpuInfo} gauge`)
      const verdict = yield* Effect.promise(() => checkMetrics(exposition))
      assert.deepStrictEqual(unexpectedProblems(verdict), [])
      assert.isTrue(acceptedByPromtool(verdict))
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("drops a GPU from gpu_serials_gpu_info at the scrape after it leaves the inventory", () =>
    Effect.gen(function* () {
      let gpus = fleet(8)
      yield* observeFleet(() => gpus)
      assert.lengthOf(samplesOf(parseSamples(yield* scrape), metricNames.gpuInfo), 8)

      gpus = [...fleet(3), ...fleet(4, 4)]
      const after = samplesOf(parseSamples(yield* scrape), metricNames.gpuInfo)
      assert.sameMembers(
        after.map((sample) => sample.labels.UUID),
        gpus.map((gpu) => gpu.uuid),
      )

      // A GPU moved to another node is one series, with the new Hostname.
      gpus = gpus.map((gpu) => (gpu.uuid === fleetGpu(0).uuid ? { ...gpu, node: "gpu-node-99" } : gpu))
      const moved = samplesOf(parseSamples(yield* scrape), metricNames.gpuInfo, { UUID: fleetGpu(0).uuid })
      assert.deepStrictEqual(
        moved.map((sample) => sample.labels.Hostname),
        ["gpu-node-99"],
      )
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("escapes what a label value may hold, so the text still parses and reads back as reported", () =>
    Effect.gen(function* () {
      const odd = { ...fleetGpu(1), product: 'Board "X" \\ rev\n2', gpu: "" }
      yield* observeFleet(() => [odd])
      const exposition = yield* scrape
      const [sample] = samplesOf(parseSamples(exposition), metricNames.gpuInfo)
      assert.strictEqual(sample?.labels.modelName, odd.product)
      assert.isTrue(acceptedByPromtool(yield* Effect.promise(() => checkMetrics(exposition))))
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("reports a fleet of any size whole in gpu_serials_gpu_info, with no overflow series", () =>
    Effect.gen(function* () {
      const gpus = fleet(5_000)
      yield* observeFleet(() => gpus)
      const info = samplesOf(parseSamples(yield* scrape), metricNames.gpuInfo)
      assert.lengthOf(info, 5_000)
      assert.strictEqual(new Set(info.map((sample) => sample.labels.UUID)).size, 5_000)
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("leaves gpu_serials_gpu_info out when it is turned off, and keeps the counts", () =>
    Effect.gen(function* () {
      const metrics = yield* ServiceMetrics
      yield* observeFleet(() => fleet(8))
      yield* metrics.observeInventory(() => ({ gpus: 8, nodes: 1, gpusByModel: { "NVIDIA H100 80GB HBM3": 8 } }))
      const exposition = yield* scrape
      assert.notInclude(exposition, metricNames.gpuInfo)
      assert.strictEqual(seriesValue(parseSamples(exposition), metricNames.gpusKnown), 8)
      // Without it the text is lint-clean: no finding at all.
      assert.deepStrictEqual(yield* Effect.promise(() => checkMetrics(exposition)), { exitCode: 0, problems: [] })
    }).pipe(Effect.provide(telemetryLayer({ metrics: { gpuInfo: false } }))),
  )

  it.live("reads a gauge's source only while the component that registered it runs", () =>
    Effect.gen(function* () {
      const metrics = yield* ServiceMetrics
      const term = yield* Scope.make()
      yield* Effect.all([
        observeFleet(() => fleet(8)),
        metrics.observeInventory(() => ({ gpus: 8, nodes: 1, gpusByModel: { "NVIDIA H100 80GB HBM3": 8 } })),
        metrics.observeFailingNodes(() => new Map([["driver-not-loaded", 2]])),
        metrics.observeWorkQueueDepth(() => 5),
      ]).pipe(Scope.provide(term))
      const leading = parseSamples(yield* scrape)
      assert.lengthOf(samplesOf(leading, metricNames.gpuInfo), 8)
      assert.strictEqual(seriesValue(leading, metricNames.gpusKnown), 8)
      assert.strictEqual(seriesValue(leading, metricNames.nodesFailing, { error_kind: "driver-not-loaded" }), 2)

      // The term ends (the leader lost its lease): the replica no longer speaks for the fleet.
      yield* Scope.close(term, Exit.void)
      const following = parseSamples(yield* scrape)
      assert.lengthOf(samplesOf(following, metricNames.gpuInfo), 0)
      assert.strictEqual(seriesValue(following, metricNames.gpusKnown), 0)
      assert.strictEqual(seriesValue(following, metricNames.nodesFailing, { error_kind: "driver-not-loaded" }), 0)
      assert.strictEqual(seriesValue(following, metricNames.workQueueDepth), 0)
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
