import { Duration } from "effect"
import type { GpuRecord } from "../../../src/domain/GpuRecord.ts"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import { defaultQueueSettings, type QueueSettings } from "../../../src/exporter/exporterhelper/QueueSettings.ts"
import type {
  PostgresConnectionSettings,
  PostgresExporterConfig,
} from "../../../src/exporter/postgres/PostgresConfig.ts"
import { addedEvent } from "../InventoryEvents.ts"

/** Short backoffs, so a retried batch is written again soon; bounded by a minute. */
export const quickRetries: QueueSettings = {
  ...defaultQueueSettings,
  batchSize: 100,
  retry: {
    ...defaultQueueSettings.retry,
    initialInterval: Duration.millis(50),
    maxInterval: Duration.millis(500),
    maxElapsed: Duration.minutes(1),
  },
}

export const exporterConfig = (
  connection: PostgresConnectionSettings,
  overrides: Partial<Omit<PostgresExporterConfig, "connection">> = {},
): PostgresExporterConfig => ({
  connection,
  schema: "public",
  table: "gpu_serials",
  autoMigrate: true,
  queue: quickRetries,
  ...overrides,
})

export const createSettings = { id: "postgres", clusterName: "prod-eu", serviceVersion: "0.1.0" }

/** Event `n` of `addedEvent`, turned into another kind at another time and place. */
export const eventOf = (
  n: number,
  event: GpuRecord["event"],
  time: string,
  place: Partial<
    Pick<GpuRecord, "cluster" | "node" | "machine" | "previousCluster" | "previousNode" | "previousMachine">
  > = {},
): InventoryEvent => {
  const base = addedEvent(n)
  return { ...base, record: { ...base.record, event, id: `${base.record.id}-${event}-${time}`, time, ...place } }
}
