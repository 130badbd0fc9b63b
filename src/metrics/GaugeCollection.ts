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
): CollectionResult => ({
  resourceMetrics: {
    resource: emptyResource(),
    scopeMetrics:
      dataPoints.length === 0
        ? []
        : [
            {
              scope: { name: scope },
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
})
