import { Context, type Effect } from "effect"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"

/**
 * Where the inventory processor hands its event batches: in the service, the exporter fan-out's
 * `export`. It must not wait for any exporter, as the processor holds its inventory while it hands over.
 */
export class InventorySink extends Context.Service<
  InventorySink,
  {
    readonly export: (events: ReadonlyArray<InventoryEvent>) => Effect.Effect<void>
  }
>()("gpu-serials/processor/inventory/InventorySink") {}
