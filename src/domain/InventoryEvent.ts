import type { GpuRecord } from "./GpuRecord.ts"

/**
 * The unit every exporter receives: the `gpu-serials/v1` record plus where the reading came
 * from. The origin is not part of the record; exporters that model resources (OTLP) use it.
 */
export interface InventoryEvent {
  readonly record: GpuRecord
  readonly origin: EventOrigin
  /**
   * How often the producer re-affirms an unchanged GPU with `observed` (`REPORT_INTERVAL`), 0 for never;
   * absent when it does not say. For exporters that tell a backend when to expect the next word of a GPU
   * (OpenTelemetry entity events).
   */
  readonly reportIntervalMs?: number
}

export interface EventOrigin {
  readonly nodeUid?: string
  readonly podNamespace?: string
  readonly podName?: string
}
