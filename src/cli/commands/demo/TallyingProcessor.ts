import * as Effect from "effect/Effect"
import type { InventoryEvent } from "../../../domain/InventoryEvent.ts"
import type { NodeObservation } from "../../../domain/NodeObservation.ts"
import { EventConsumer } from "../../../pipeline/EventConsumer.ts"
import type { BuiltinProcessor } from "../../../service/Distribution.ts"

/** What a tallying processor tells: the events it hands on and, in a cluster's pipeline, the node observations it takes. */
export interface ProcessorTally {
  readonly observeEvents: (events: ReadonlyArray<InventoryEvent>) => void
  /** Absent for a hub's pipeline, whose observations are the clusters' messages. */
  readonly observe?: (observation: NodeObservation) => void
}

/**
 * The demo's pipeline stage around the processor: the same processor type, which tells `tally` every
 * observation it takes and every batch of events it hands to the exporters, for the demo's progress
 * lines and summary. Everything else is the processor's own.
 */
export const tallyingProcessor = (processor: BuiltinProcessor, tally: ProcessorTally): BuiltinProcessor => ({
  ...processor,
  create: (config, settings) =>
    Effect.gen(function* () {
      const consumer = yield* EventConsumer
      const counted = EventConsumer.of({
        export: (events: ReadonlyArray<InventoryEvent>) =>
          Effect.andThen(
            consumer.export(events),
            Effect.sync(() => tally.observeEvents(events)),
          ),
      })
      const running = yield* processor.create(config, settings).pipe(Effect.provideService(EventConsumer, counted))
      if (tally.observe === undefined) return running
      return {
        ...running,
        observe: (observation) =>
          Effect.andThen(
            // A cluster's pipeline, whose processor takes node observations.
            Effect.sync(() => tally.observe?.(observation as NodeObservation)),
            running.observe(observation),
          ),
      }
    }),
})
