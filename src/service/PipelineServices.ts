import type { ServiceMetrics } from "../metrics/ServiceMetrics.ts"
import type { EventConsumer } from "../pipeline/EventConsumer.ts"
import type { InventoryFeed } from "../pipeline/InventoryFeed.ts"
import type { InventoryStores } from "../pipeline/InventoryStore.ts"

/** What the service offers the receivers and processors it creates. */
export type PipelineServices = ServiceMetrics | EventConsumer | InventoryStores | InventoryFeed
