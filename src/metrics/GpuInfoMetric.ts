import { type HrTime, ValueType } from "@opentelemetry/api"
import { millisToHrTime } from "@opentelemetry/core"
import type { CollectionResult, DataPoint } from "@opentelemetry/sdk-metrics"
import { gaugeCollection } from "./GaugeCollection.ts"
import { type GpuInfoFields, type GpuInfoLabels, gpuInfoLabels } from "./GpuInfoLabels.ts"
import type { ExtraMetrics } from "./ServiceMeter.ts"

export const gpuInfoMetricName = "gpu_serials_gpu_info"

/**
 * The GPUs to report, read at every collection, and how to get the record fields of one. The GPUs are
 * immutable objects replaced when the GPU changes (inventory entries, records): the labels of each are
 * worked out once.
 */
export interface GpuInfoSource<T extends object> {
  readonly gpus: () => Iterable<T>
  readonly fields: (gpu: T) => GpuInfoFields
}

const descriptor = {
  name: gpuInfoMetricName,
  description:
    "One series per GPU in the known inventory, always 1: dcgm-exporter's UUID, pci_bus_id, modelName and Hostname labels, with serial, chassis and cluster.",
  unit: "",
  valueType: ValueType.INT,
} as const

/** A label value in the text exposition format: backslash, double quote and line feed escaped. */
export const escapeLabelValue = (value: string): string =>
  /[\\"\n]/.test(value) ? value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n") : value

/** The sample line of one GPU, as one flat string (no rope of the pieces kept alive in the cache). */
const sampleLine = (labels: GpuInfoLabels): string => {
  const pairs: Array<string> = []
  for (const [name, value] of Object.entries(labels)) pairs.push(`${name}="${escapeLabelValue(value)}"`)
  return [gpuInfoMetricName, "{", pairs.join(","), "} 1\n"].join("")
}

/** Sample lines joined into one piece of `/metrics`: about 1.2 MB, a few milliseconds to make. */
const linesPerPiece = 1024

const header = `# HELP ${gpuInfoMetricName} ${descriptor.description}\n# TYPE ${gpuInfoMetricName} gauge\n`

/** What one collection visits: the labels (OTLP) or the sample line (Prometheus text) of every GPU. */
interface Visitor {
  readonly labels: (visit: (labels: GpuInfoLabels) => void) => void
  readonly lines: () => Iterable<string>
}

const noGpus: Visitor = { labels: () => {}, lines: () => [] }

/**
 * `gpu_serials_gpu_info` as extra metrics of the service's meter: every collection reports exactly the
 * GPUs the source holds then, so a GPU removed from the inventory leaves the metric at the next scrape,
 * and a fleet of any size is reported whole. (The SDK's observable gauges keep every series ever
 * observed and fold those beyond 2,000 into one overflow series, and its serializer spends seconds on a
 * large fleet.) A GPU's sample line is made once, when its object is first seen, and kept while the
 * object lives (about 300 bytes a GPU), so a scrape only joins lines; an OTLP push, once a minute at
 * most, works its labels out again rather than keep them too.
 */
export class GpuInfoMetric implements ExtraMetrics {
  private source: object | undefined
  private visitor: Visitor = noGpus
  private readonly startTime: HrTime = millisToHrTime(Date.now())

  /** Reports the GPUs of `source` from the next collection on. */
  observe<T extends object>(source: GpuInfoSource<T>): void {
    const lines = new WeakMap<T, string>()
    this.source = source
    this.visitor = {
      labels: (visit) => {
        for (const gpu of source.gpus()) visit(gpuInfoLabels(source.fields(gpu)))
      },
      lines: function* () {
        for (const gpu of source.gpus()) {
          let line = lines.get(gpu)
          if (line === undefined) {
            line = sampleLine(gpuInfoLabels(source.fields(gpu)))
            lines.set(gpu, line)
          }
          yield line
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
   * The text in pieces of `linesPerPiece` sample lines, the first with the header, each made only when
   * asked for (the GPUs as they are then); nothing without GPUs.
   */
  readonly prometheusText = (): Iterable<string> => {
    const visitor = this.visitor
    return (function* () {
      let lines: Array<string> = []
      let first = true
      for (const line of visitor.lines()) {
        lines.push(line)
        if (lines.length >= linesPerPiece) {
          yield first ? header + lines.join("") : lines.join("")
          first = false
          lines = []
        }
      }
      if (lines.length > 0) yield first ? header + lines.join("") : lines.join("")
    })()
  }

  async collect(): Promise<CollectionResult> {
    const endTime = millisToHrTime(Date.now())
    const startTime = this.startTime
    const dataPoints: Array<DataPoint<number>> = []
    this.visitor.labels((attributes) => dataPoints.push({ startTime, endTime, attributes, value: 1 }))
    return gaugeCollection("gpu-serials", descriptor, dataPoints)
  }
}
