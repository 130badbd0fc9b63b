import { assert, describe, it } from "@effect/vitest"
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics"
import { Effect, Exit, Scope } from "effect"
import type { GpuHealth } from "../../src/domain/GpuHealth.ts"
import { HealthServer } from "../../src/health/HealthServer.ts"
import { type GpuInfoFields, gpuInfoLabels } from "../../src/metrics/GpuInfoLabels.ts"
import { metricNames } from "../../src/metrics/ServiceInstruments.ts"
import { ServiceMeter } from "../../src/metrics/ServiceMeter.ts"
import { ServiceMetrics } from "../../src/metrics/ServiceMetrics.ts"
import { probe } from "../health/HttpProbe.ts"
import { parseSamples, type Sample, samplesOf } from "./PrometheusText.ts"
import { acceptedByPromtool, checkMetrics, unexpectedProblems } from "./Promtool.ts"
import { telemetryLayer } from "./TelemetryLayers.ts"

const ok: GpuHealth = { state: "ok", reasons: [], rmaEligible: false, vbios: "96.00.74.00.01" }
const remapPending: GpuHealth = {
  state: "degraded",
  reasons: ["row-remap-pending", "pcie-width-reduced"],
  rmaEligible: false,
  remappedRows: { correctable: 0, uncorrectable: 2, pending: true, failure: false },
  pcie: { linkWidth: { current: 8, max: 16 } },
}
const remapFailure: GpuHealth = {
  state: "failed",
  reasons: ["row-remap-failure", "row-remap-pending"],
  rmaEligible: true,
  remappedRows: { correctable: 0, uncorrectable: 9, pending: true, failure: true },
}
const severeRecovery: GpuHealth = { state: "failed", reasons: ["recovery-action-severe"], rmaEligible: false }

/** GPU `n` of a fleet of H100s, eight to a node, an NVL72 chassis on even nodes, with the health given. */
const fleetGpu = (n: number, health?: GpuHealth): GpuInfoFields => ({
  cluster: "prod-eu",
  node: `gpu-node-${Math.floor(n / 8)}`,
  uuid: `GPU-${n.toString(16).padStart(8, "0")}-1111-2222-3333-444444444444`,
  gpu: `${1_650_000_000_000 + n}`,
  chassis: Math.floor(n / 8) % 2 === 0 ? "1821225190819" : "",
  product: "NVIDIA H100 80GB HBM3",
  pciBusId: `00000000:${(0x18 + (n % 8)).toString(16).toUpperCase()}:00.0`,
  ...(health === undefined ? {} : { health }),
})

/** Eight GPUs: five ok, one remap pending, one remap failure, one without health (an older reading). */
const node = (): ReadonlyArray<GpuInfoFields> => [
  ...[0, 1, 2, 3, 4].map((n) => fleetGpu(n, ok)),
  fleetGpu(5, remapPending),
  fleetGpu(6, remapFailure),
  fleetGpu(7),
]

const observeFleet = (gpus: () => ReadonlyArray<GpuInfoFields>) =>
  Effect.gen(function* () {
    const metrics = yield* ServiceMetrics
    yield* metrics.observeGpus({ gpus, fields: (fields: GpuInfoFields) => fields })
  })

const scrape = Effect.gen(function* () {
  const { port } = yield* HealthServer
  const answer = yield* probe(port, "/metrics")
  assert.strictEqual(answer.status, 200)
  return answer.body
})

const byHealth = (samples: ReadonlyArray<Sample>) =>
  Object.fromEntries(samplesOf(samples, metricNames.gpusByHealth).map((sample) => [sample.labels.state, sample.value]))

const healthByUuid = (samples: ReadonlyArray<Sample>) =>
  Object.fromEntries(samplesOf(samples, metricNames.gpuHealth).map((sample) => [sample.labels.UUID, sample.value]))

describe("the GPUs' health on /metrics", () => {
  it.live(
    "gives each GPU that reports health one series with gpu_serials_gpu_info's labels, 0 ok, 1 degraded, 2 failed",
    () =>
      Effect.gen(function* () {
        yield* observeFleet(node)
        const exposition = yield* scrape
        const samples = parseSamples(exposition)

        assert.deepStrictEqual(healthByUuid(samples), {
          [fleetGpu(0).uuid]: 0,
          [fleetGpu(1).uuid]: 0,
          [fleetGpu(2).uuid]: 0,
          [fleetGpu(3).uuid]: 0,
          [fleetGpu(4).uuid]: 0,
          [fleetGpu(5).uuid]: 1,
          [fleetGpu(6).uuid]: 2,
        })
        // Same labels as the info series, so on(UUID) joins and an alert reads serial, Hostname and chassis.
        assert.deepStrictEqual(
          samplesOf(samples, metricNames.gpuHealth, { UUID: fleetGpu(6).uuid })[0]?.labels,
          gpuInfoLabels(fleetGpu(6)),
        )
        assert.deepStrictEqual(byHealth(samples), { ok: 5, degraded: 1, failed: 1 })

        const verdict = yield* Effect.promise(() => checkMetrics(exposition))
        assert.deepStrictEqual(unexpectedProblems(verdict), [])
        assert.isTrue(acceptedByPromtool(verdict))
        for (const name of [metricNames.gpuHealth, metricNames.gpuHealthReason, metricNames.gpuRmaEligible]) {
          assert.include(exposition, `# TYPE ${name} gauge`)
        }
      }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("lists the reasons of GPUs that are not ok by UUID, and the RMA-eligible ones with their serial", () =>
    Effect.gen(function* () {
      yield* observeFleet(() => [...node(), fleetGpu(8, severeRecovery)])
      const samples = parseSamples(yield* scrape)

      const reasons = samplesOf(samples, metricNames.gpuHealthReason)
      assert.deepStrictEqual(
        [...new Set(reasons.map((sample) => Object.keys(sample.labels).join(",")))],
        ["UUID,reason"],
      )
      assert.sameDeepMembers(
        reasons.map((sample) => [sample.labels.UUID, sample.labels.reason, sample.value]),
        [
          [fleetGpu(5).uuid, "row-remap-pending", 1],
          [fleetGpu(5).uuid, "pcie-width-reduced", 1],
          [fleetGpu(6).uuid, "row-remap-failure", 1],
          [fleetGpu(6).uuid, "row-remap-pending", 1],
          [fleetGpu(8).uuid, "recovery-action-severe", 1],
        ],
      )
      // Failed is not the same as RMA-eligible: the severe recovery action needs a reboot, not a new board.
      const rma = samplesOf(samples, metricNames.gpuRmaEligible)
      assert.deepStrictEqual(
        rma.map((sample) => [sample.labels.serial, sample.labels.Hostname, sample.labels.chassis, sample.value]),
        [[fleetGpu(6).gpu, "gpu-node-0", "1821225190819", 1]],
      )
      assert.deepStrictEqual(byHealth(samples), { ok: 5, degraded: 1, failed: 2 })
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("keeps the reason label within the verdict table's codes: one it does not have reads other", () =>
    Effect.gen(function* () {
      // A health kept by a store written by another version of the service.
      const stored: GpuHealth = {
        state: "degraded",
        reasons: ["row-remap-pending", "gone-code", "newer-code"],
        rmaEligible: false,
      }
      yield* observeFleet(() => [fleetGpu(1, stored)])
      const reasons = samplesOf(parseSamples(yield* scrape), metricNames.gpuHealthReason)
      assert.sameMembers(
        reasons.map((sample) => sample.labels.reason),
        ["row-remap-pending", "other"],
      )
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("follows a GPU's health from scrape to scrape: a reset clears its reasons, a removed GPU leaves", () =>
    Effect.gen(function* () {
      let gpus = node()
      yield* observeFleet(() => gpus)
      const before = parseSamples(yield* scrape)
      assert.strictEqual(healthByUuid(before)[fleetGpu(5).uuid], 1)

      // GPU 5 was reset (its remap done), GPU 6 was taken out for its RMA.
      gpus = gpus
        .filter((gpu) => gpu.uuid !== fleetGpu(6).uuid)
        .map((gpu) => (gpu.uuid === fleetGpu(5).uuid ? fleetGpu(5, ok) : gpu))
      const after = parseSamples(yield* scrape)
      assert.strictEqual(healthByUuid(after)[fleetGpu(5).uuid], 0)
      assert.notProperty(healthByUuid(after), fleetGpu(6).uuid)
      assert.lengthOf(samplesOf(after, metricNames.gpuHealthReason), 0)
      assert.lengthOf(samplesOf(after, metricNames.gpuRmaEligible), 0)
      assert.deepStrictEqual(byHealth(after), { ok: 6, degraded: 0, failed: 0 })
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("always has the three states, at 0 on a replica that does not lead or knows no health", () =>
    Effect.gen(function* () {
      const term = yield* Scope.make()
      yield* observeFleet(node).pipe(Scope.provide(term))
      assert.deepStrictEqual(byHealth(parseSamples(yield* scrape)), { ok: 5, degraded: 1, failed: 1 })

      yield* Scope.close(term, Exit.void)
      const following = parseSamples(yield* scrape)
      assert.deepStrictEqual(byHealth(following), { ok: 0, degraded: 0, failed: 0 })
      assert.lengthOf(samplesOf(following, metricNames.gpuHealth), 0)

      // Readings that say nothing of health (an old reading, a CSV query without the fields): no series, no count.
      yield* observeFleet(() => [fleetGpu(1), fleetGpu(2)])
      const silent = parseSamples(yield* scrape)
      assert.deepStrictEqual(byHealth(silent), { ok: 0, degraded: 0, failed: 0 })
      assert.lengthOf(samplesOf(silent, metricNames.gpuHealth), 0)
      assert.lengthOf(samplesOf(silent, metricNames.gpuInfo), 2)
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("keeps the health series when gpu_serials_gpu_info is turned off", () =>
    Effect.gen(function* () {
      yield* observeFleet(node)
      const samples = parseSamples(yield* scrape)
      assert.lengthOf(samplesOf(samples, metricNames.gpuInfo), 0)
      assert.lengthOf(samplesOf(samples, metricNames.gpuHealth), 7)
      assert.lengthOf(samplesOf(samples, metricNames.gpuRmaEligible), 1)
    }).pipe(Effect.provide(telemetryLayer({ metrics: { gpuInfo: false } }))),
  )

  it.live("reports a fleet of any size whole, each family once, as text promtool accepts", () =>
    Effect.gen(function* () {
      const gpus = Array.from({ length: 5_000 }, (_, n) => fleetGpu(n, n % 100 === 0 ? remapPending : ok))
      yield* observeFleet(() => gpus)
      const exposition = yield* scrape
      const samples = parseSamples(exposition)
      assert.lengthOf(samplesOf(samples, metricNames.gpuHealth), 5_000)
      assert.lengthOf(samplesOf(samples, metricNames.gpuHealthReason), 100)
      assert.deepStrictEqual(byHealth(samples), { ok: 4_950, degraded: 50, failed: 0 })
      assert.lengthOf(exposition.split(`# TYPE ${metricNames.gpuHealth} gauge`), 2)
      assert.isTrue(acceptedByPromtool(yield* Effect.promise(() => checkMetrics(exposition))))
    }).pipe(Effect.provide(telemetryLayer())),
  )

  it.live("pushes the same series over OTLP", () =>
    Effect.gen(function* () {
      const meter = yield* ServiceMeter
      const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
      const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
      yield* meter.attachReader(reader)
      yield* observeFleet(node)
      yield* Effect.promise(() => reader.forceFlush())
      const metrics = exporter.getMetrics()[0]?.scopeMetrics.flatMap((scope) => scope.metrics) ?? []
      const points = (name: string) => metrics.find((metric) => metric.descriptor.name === name)?.dataPoints ?? []

      const failed = points(metricNames.gpuHealth).find((point) => point.attributes.UUID === fleetGpu(6).uuid)
      assert.strictEqual(failed?.value, 2)
      assert.deepStrictEqual(failed?.attributes, { ...gpuInfoLabels(fleetGpu(6)) })
      assert.lengthOf(points(metricNames.gpuHealth), 7)
      assert.lengthOf(points(metricNames.gpuHealthReason), 4)
      assert.deepStrictEqual(
        points(metricNames.gpuRmaEligible).map((point) => point.attributes.serial),
        [fleetGpu(6).gpu],
      )
      assert.deepStrictEqual(
        points(metricNames.gpusByHealth).map((point) => [point.attributes.state, point.value]),
        [
          ["ok", 5],
          ["degraded", 1],
          ["failed", 1],
        ],
      )
    }).pipe(Effect.provide(telemetryLayer())),
  )
})
