import { type Attributes, type HrTime, ValueType } from "@opentelemetry/api"
import { millisToHrTime } from "@opentelemetry/core"
import { emptyResource } from "@opentelemetry/resources"
import {
  AggregationTemporality,
  type CollectionResult,
  type DataPoint,
  DataPointType,
  type MetricProducer,
} from "@opentelemetry/sdk-metrics"
import { type GpuInfoFields, gpuInfoLabels } from "./GpuInfoLabels.ts"

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

type DataPoints = (endTime: HrTime) => Array<DataPoint<number>>

const noPoints: DataPoints = () => []

/**
 * `gpu_serials_gpu_info` as a metric producer read with the service's instruments: every collection
 * reports exactly the GPUs the source holds then, so a GPU removed from the inventory leaves the metric
 * at the next scrape, and a fleet of any size is reported whole. (The SDK's observable gauges keep every
 * series ever observed and fold those beyond 2,000 into one overflow series.)
 */
export class GpuInfoMetric implements MetricProducer {
  private source: object | undefined
  private points: DataPoints = noPoints
  private readonly startTime: HrTime = millisToHrTime(Date.now())

  /** Reports the GPUs of `source` from the next collection on. */
  observe<T extends object>(source: GpuInfoSource<T>): void {
    const labels = new WeakMap<T, Attributes>()
    const startTime = this.startTime
    this.source = source
    this.points = (endTime) => {
      const points: Array<DataPoint<number>> = []
      for (const gpu of source.gpus()) {
        let attributes = labels.get(gpu)
        if (attributes === undefined) {
          attributes = { ...gpuInfoLabels(source.fields(gpu)) }
          labels.set(gpu, attributes)
        }
        points.push({ startTime, endTime, attributes, value: 1 })
      }
      return points
    }
  }

  /** Reports no GPU from the next collection on, unless `source` was replaced meanwhile. */
  forget(source: object): void {
    if (this.source !== source) return
    this.source = undefined
    this.points = noPoints
  }

  /** The data points of one collection: one per GPU, value 1. */
  dataPoints(): Array<DataPoint<number>> {
    return this.points(millisToHrTime(Date.now()))
  }

  async collect(): Promise<CollectionResult> {
    const dataPoints = this.dataPoints()
    return {
      resourceMetrics: {
        resource: emptyResource(),
        scopeMetrics:
          dataPoints.length === 0
            ? []
            : [
                {
                  scope: { name: "gpu-serials" },
                  metrics: [
                    {
                      descriptor,
                      aggregationTemporality: AggregationTemporality.CUMULATIVE,
                      dataPointType: DataPointType.GAUGE,
                      dataPoints,
                    },
                  ],
                },
              ],
      },
      errors: [],
    }
  }
}
