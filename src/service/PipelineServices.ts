import type { EventConsumer } from "../pipeline/EventConsumer.ts"
import type { InventoryFeed } from "../processor/inventory/InventoryFeed.ts"
import type { InventoryStores } from "../processor/inventory/InventoryStore.ts"
import type { ServiceMetrics } from "../telemetry/ServiceMetrics.ts"

/** What the service offers the receivers and processors it creates. */
export type PipelineServices = ServiceMetrics | EventConsumer | InventoryStores | InventoryFeed
