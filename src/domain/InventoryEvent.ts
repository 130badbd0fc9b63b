import type { GpuRecord } from "./GpuRecord.ts"

/**
 * The unit every exporter receives: the `gpu-serials/v1` record plus where the reading came
 * from. The origin is not part of the record; exporters that model resources (OTLP) use it.
 */
export interface InventoryEvent {
  readonly record: GpuRecord
  readonly origin: EventOrigin
}

export interface EventOrigin {
  readonly nodeUid?: string
  readonly podNamespace?: string
  readonly podName?: string
}
