import { emptyResource } from "@opentelemetry/resources"
import {
  AggregationTemporality,
  type CollectionResult,
  type DataPoint,
  DataPointType,
  type MetricDescriptor,
} from "@opentelemetry/sdk-metrics"

/**
 * One collection of a gauge built by hand at collection time, for a `MetricProducer`: nothing when it
 * has no data point, so a reader sends no empty metric. The resource is the reader's own.
 */
export const gaugeCollection = (
  scope: string,
  descriptor: MetricDescriptor,
  dataPoints: Array<DataPoint<number>>,
): CollectionResult => gaugesCollection(scope, [{ descriptor, dataPoints }])

/** One collection of several gauges built by hand, in the order given; those without a data point are left out. */
export const gaugesCollection = (
  scope: string,
  gauges: ReadonlyArray<{ readonly descriptor: MetricDescriptor; readonly dataPoints: Array<DataPoint<number>> }>,
): CollectionResult => {
  const metrics = gauges
    .filter((gauge) => gauge.dataPoints.length > 0)
    .map(({ descriptor, dataPoints }) => ({
      descriptor,
      aggregationTemporality: AggregationTemporality.CUMULATIVE as const,
      dataPointType: DataPointType.GAUGE as const,
      dataPoints,
    }))
  return {
    resourceMetrics: {
      resource: emptyResource(),
      scopeMetrics: metrics.length === 0 ? [] : [{ scope: { name: scope }, metrics }],
    },
    errors: [],
  }
}
