import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { InventoryEvent } from "../domain/InventoryEvent.ts"

/**
 * Where a processor hands its event batches, as the Collector's next consumer: in the service, the
 * exporter fan-out's `export`. On a cluster it never waits for any exporter, as the processor holds its
 * state while it hands over. On a hub, whose source keeps what is not acknowledged, it waits until every
 * exporter has room (interruptibly, by the service's shutdown), so none drops records for a full buffer.
 */
export class EventConsumer extends Context.Service<
  EventConsumer,
  {
    readonly export: (events: ReadonlyArray<InventoryEvent>) => Effect.Effect<void>
  }
>()("gpu-serials/pipeline/EventConsumer") {}
