import { type HrTime, ValueType } from "@opentelemetry/api"
import { millisToHrTime } from "@opentelemetry/core"
import type { CollectionResult, DataPoint, MetricDescriptor } from "@opentelemetry/sdk-metrics"
import type { GpuHealth, HealthState } from "../domain/GpuHealth.ts"
import { healthStates } from "../domain/GpuHealth.ts"
import { healthReasons } from "../domain/HealthVerdict.ts"
import { overflowLabelValue } from "./BoundedLabel.ts"
import { gaugesCollection } from "./GaugeCollection.ts"
import { type GpuInfoLabels, gpuInfoLabels } from "./GpuInfoLabels.ts"
import { escapeLabelValue, type GpuInfoSource } from "./GpuInfoMetric.ts"
import type { ExtraMetrics } from "./ServiceMeter.ts"

export const gpuHealthMetricNames = {
  health: "gpu_serials_gpu_health",
  reason: "gpu_serials_gpu_health_reason",
  rmaEligible: "gpu_serials_gpu_rma_eligible",
  byHealth: "gpu_serials_gpus_by_health",
} as const

const gauge = (name: string, description: string): MetricDescriptor => ({
  name,
  description,
  unit: "",
  valueType: ValueType.INT,
})

const descriptors = {
  health: gauge(
    gpuHealthMetricNames.health,
    "One series per known GPU whose readings report its condition, with gpu_serials_gpu_info's labels: 0 ok, 1 degraded, 2 failed.",
  ),
  reason: gauge(
    gpuHealthMetricNames.reason,
    "One series per active health reason of a GPU, always 1, by UUID and reason code; none for a GPU that is ok.",
  ),
  rmaEligible: gauge(
    gpuHealthMetricNames.rmaEligible,
    "One series per GPU that qualifies for an RMA, always 1, with gpu_serials_gpu_info's labels.",
  ),
  byHealth: gauge(
    gpuHealthMetricNames.byHealth,
    "Known GPUs whose readings report their condition, by health state (ok, degraded, failed).",
  ),
} as const

/** The value of `gpu_serials_gpu_health`: the state's rank, worse is higher. */
export const healthStateValue = (state: HealthState): number => healthStates.indexOf(state)

const labelSet = (labels: Readonly<Record<string, string>>): string => {
  const pairs: Array<string> = []
  for (const [name, value] of Object.entries(labels)) pairs.push(`${name}="${escapeLabelValue(value)}"`)
  return `{${pairs.join(",")}}`
}

/** What one GPU contributes to the health metrics: its state, and its sample lines as flat strings. */
interface GpuHealthSeries {
  readonly state: HealthState
  readonly healthLine: string
  /** Its reason lines joined; empty when it has no reason. */
  readonly reasonLines: string
  /** Empty when it does not qualify for an RMA. */
  readonly rmaLine: string
}

/** A GPU's labels and the verdict on its condition. */
interface GpuHealthFacts {
  readonly labels: GpuInfoLabels
  readonly health: GpuHealth
}

const reasonCodes: ReadonlySet<string> = new Set(healthReasons.map((reason) => reason.code))

/**
 * The reason labels of a verdict, each once: the verdict table's codes, and `other` for a code it does not
 * have (a health kept by a store from another version), so the label stays within a fixed set.
 */
const reasonsOf = (health: GpuHealth): ReadonlySet<string> =>
  new Set(health.reasons.map((code) => (reasonCodes.has(code) ? code : overflowLabelValue)))

const seriesOf = ({ labels, health }: GpuHealthFacts): GpuHealthSeries => {
  const set = labelSet(labels)
  const reasonLines: Array<string> = []
  for (const reason of reasonsOf(health)) {
    reasonLines.push([descriptors.reason.name, labelSet({ UUID: labels.UUID, reason }), " 1\n"].join(""))
  }
  return {
    state: health.state,
    healthLine: [descriptors.health.name, set, " ", String(healthStateValue(health.state)), "\n"].join(""),
    reasonLines: reasonLines.join(""),
    rmaLine: health.rmaEligible ? [descriptors.rmaEligible.name, set, " 1\n"].join("") : "",
  }
}

/** Sample lines joined into one piece of `/metrics`, as `gpu_serials_gpu_info` has them. */
const linesPerPiece = 1024

const header = (descriptor: MetricDescriptor): string =>
  `# HELP ${descriptor.name} ${descriptor.description}\n# TYPE ${descriptor.name} gauge\n`

/** `lines` in pieces of `linesPerPiece`, the first with the family's header; nothing without lines. */
function* inPieces(descriptor: MetricDescriptor, lines: Iterable<string>): Generator<string> {
  let piece: Array<string> = []
  let first = true
  for (const line of lines) {
    piece.push(line)
    if (piece.length >= linesPerPiece) {
      yield first ? header(descriptor) + piece.join("") : piece.join("")
      first = false
      piece = []
    }
  }
  if (piece.length > 0) yield first ? header(descriptor) + piece.join("") : piece.join("")
}

/** What one collection visits: each GPU's lines, made once per GPU object (Prometheus), or its facts (OTLP). */
interface Visitor {
  readonly series: () => Iterable<GpuHealthSeries>
  readonly facts: () => Iterable<GpuHealthFacts>
}

const noGpus: Visitor = { series: () => [], facts: () => [] }

/** Marks a GPU object whose fields carry no health, so it is not looked at again. */
const noHealth = Symbol("no health")

const countsByState = (): Record<HealthState, number> => ({ ok: 0, degraded: 0, failed: 0 })

/**
 * The health of the known GPUs as metrics of the service's meter, read from the GPUs
 * `gpu_serials_gpu_info` reports: `gpu_serials_gpu_health` (one series per GPU whose readings report its
 * condition, the state as 0/1/2), `gpu_serials_gpu_health_reason` (one series per active reason, by
 * `UUID`), `gpu_serials_gpu_rma_eligible` (one series per GPU that qualifies for an RMA) and
 * `gpu_serials_gpus_by_health` (the three states, always). The per-GPU families carry
 * `gpu_serials_gpu_info`'s labels, so an alert names serial, node and chassis without a join. As in
 * `GpuInfoMetric`, a GPU's lines are made once per GPU object (the inventory replaces the object when the
 * GPU's health changes) and every collection reports exactly the GPUs held then, in one pass over them.
 */
export class GpuHealthMetric implements ExtraMetrics {
  private source: object | undefined
  private visitor: Visitor = noGpus
  private readonly startTime: HrTime = millisToHrTime(Date.now())

  /** Reports the health of the GPUs of `source` from the next collection on. */
  observe<T extends object>(source: GpuInfoSource<T>): void {
    const made = new WeakMap<T, GpuHealthSeries | typeof noHealth>()
    const factsOf = (gpu: T): GpuHealthFacts | undefined => {
      const fields = source.fields(gpu)
      return fields.health === undefined ? undefined : { labels: gpuInfoLabels(fields), health: fields.health }
    }
    this.source = source
    this.visitor = {
      series: function* () {
        for (const gpu of source.gpus()) {
          let series = made.get(gpu)
          if (series === undefined) {
            const facts = factsOf(gpu)
            series = facts === undefined ? noHealth : seriesOf(facts)
            made.set(gpu, series)
          }
          if (series !== noHealth) yield series
        }
      },
      facts: function* () {
        for (const gpu of source.gpus()) {
          const facts = factsOf(gpu)
          if (facts !== undefined) yield facts
        }
      },
    }
  }

  /** Reports no GPU from the next collection on, unless `source` was replaced meanwhile. */
  forget(source: object): void {
    if (this.source !== source) return
    this.source = undefined
    this.visitor = noGpus
  }

  /**
   * `gpu_serials_gpu_health` in pieces made as asked for, then the reasons, the RMA-eligible GPUs and
   * the count by state, all from one pass over the GPUs, so the families agree with each other.
   */
  readonly prometheusText = (): Iterable<string> => {
    const visitor = this.visitor
    return (function* () {
      const counts = countsByState()
      const reasonLines: Array<string> = []
      const rmaLines: Array<string> = []
      let piece: Array<string> = []
      let first = true
      for (const series of visitor.series()) {
        counts[series.state] += 1
        if (series.reasonLines !== "") reasonLines.push(series.reasonLines)
        if (series.rmaLine !== "") rmaLines.push(series.rmaLine)
        piece.push(series.healthLine)
        if (piece.length >= linesPerPiece) {
          yield first ? header(descriptors.health) + piece.join("") : piece.join("")
          first = false
          piece = []
        }
      }
      if (piece.length > 0) yield first ? header(descriptors.health) + piece.join("") : piece.join("")
      yield* inPieces(descriptors.reason, reasonLines)
      yield* inPieces(descriptors.rmaEligible, rmaLines)
      yield* inPieces(
        descriptors.byHealth,
        healthStates.map((state) => `${descriptors.byHealth.name}{state="${state}"} ${counts[state]}\n`),
      )
    })()
  }

  async collect(): Promise<CollectionResult> {
    const endTime = millisToHrTime(Date.now())
    const startTime = this.startTime
    const point = (attributes: Readonly<Record<string, string>>, value: number): DataPoint<number> => ({
      startTime,
      endTime,
      attributes: { ...attributes },
      value,
    })
    const health: Array<DataPoint<number>> = []
    const reason: Array<DataPoint<number>> = []
    const rmaEligible: Array<DataPoint<number>> = []
    const counts = countsByState()
    for (const facts of this.visitor.facts()) {
      counts[facts.health.state] += 1
      health.push(point(facts.labels, healthStateValue(facts.health.state)))
      for (const code of reasonsOf(facts.health)) reason.push(point({ UUID: facts.labels.UUID, reason: code }, 1))
      if (facts.health.rmaEligible) rmaEligible.push(point(facts.labels, 1))
    }
    return gaugesCollection("gpu-serials", [
      { descriptor: descriptors.health, dataPoints: health },
      { descriptor: descriptors.reason, dataPoints: reason },
      { descriptor: descriptors.rmaEligible, dataPoints: rmaEligible },
      { descriptor: descriptors.byHealth, dataPoints: healthStates.map((state) => point({ state }, counts[state])) },
    ])
  }
}
