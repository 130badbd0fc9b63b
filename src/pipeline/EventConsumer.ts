import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { InventoryEvent } from "../domain/InventoryEvent.ts"

/**
 * Where a processor hands its event batches, as the Collector's next consumer: in the service, the
 * exporter fan-out's `export`. It must not wait for any exporter, as the processor holds its state while
 * it hands over.
 */
export class EventConsumer extends Context.Service<
  EventConsumer,
  {
    readonly export: (events: ReadonlyArray<InventoryEvent>) => Effect.Effect<void>
  }
>()("gpu-serials/pipeline/EventConsumer") {}
