import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import type { ComponentConfig } from "../config/ServiceConfig.ts"
import type { ClusterObservation } from "../domain/ClusterObservation.ts"
import type { NodeObservation } from "../domain/NodeObservation.ts"
import type { Fleet } from "../fleet/Fleet.ts"
import { EventConsumer } from "../pipeline/EventConsumer.ts"
import { InventoryFeed } from "../pipeline/InventoryFeed.ts"
import { InventoryStores } from "../pipeline/InventoryStore.ts"
import { observationKindOf } from "../pipeline/ObservationKind.ts"
import type { Receiver } from "../pipeline/Receiver.ts"
import type { BuiltinProcessor, BuiltinReceiver } from "./Distribution.ts"
import * as InventoryFeedQueue from "./InventoryFeedQueue.ts"
import type { ServiceShutdown } from "./ServiceShutdown.ts"
import type { TermReadiness } from "./TermReadiness.ts"

/** What a term is made of: the pipeline's receiver and processor, and what the service offers them. */
export interface PipelineTermParts {
  readonly receiver: { readonly factory: BuiltinReceiver; readonly config: ComponentConfig }
  readonly processor: { readonly factory: BuiltinProcessor; readonly config: ComponentConfig }
  readonly settings: { readonly clusterName: string; readonly serviceVersion: string }
  /** Where the processor hands its events: the exporters' fan-out. */
  readonly consumer: EventConsumer["Service"]
  readonly stores: InventoryStores["Service"]
  readonly readiness: TermReadiness
  readonly shutdown: ServiceShutdown
  /** The fleet page and API's state: sees the term's changes of the inventory and its node readings. */
  readonly fleet?: Fleet["Service"]
}

/**
 * Starts one term in the current scope: the processor loads its store, the receiver starts; returns the
 * delivery of the receiver's observations to the processor, which runs until the receiver stops. Closing
 * the term's scope stops the receiver (its reads are abandoned) while the observations already made reach
 * the processor, ends the feed so the receiver's node labeller writes the last changes, then the
 * processor flushes its store.
 */
export const start = Effect.fnUntraced(function* (parts: PipelineTermParts) {
  const { receiver, processor, settings, consumer, stores, readiness, shutdown, fleet } = parts
  yield* readiness.lead
  // The term's processor publishes its changes here; its receiver mirrors them (the node labeller), and
  // the fleet API's view takes them as they are published.
  const queue = yield* InventoryFeedQueue.make
  if (fleet !== undefined) fleet.view.clearInventory()
  const feed: InventoryFeed["Service"] =
    fleet === undefined
      ? queue
      : {
          ...queue,
          publish: (changes) =>
            Effect.andThen(
              Effect.sync(() => fleet.view.apply(changes)),
              queue.publish(changes),
            ),
        }
  // A hub's page knows the GPUs of every cluster from the records its processor hands over.
  const hubPage = fleet !== undefined && observationKindOf(receiver.factory) === "cluster" ? fleet : undefined
  const handedOver: EventConsumer["Service"] =
    hubPage === undefined
      ? consumer
      : {
          ...consumer,
          export: (events) =>
            Effect.andThen(
              Effect.sync(() => hubPage.view.follow(events.map((event) => event.record))),
              consumer.export(events),
            ),
        }
  const offered = <A, E, R>(component: Effect.Effect<A, E, R>) =>
    component.pipe(
      Effect.provideService(EventConsumer, handedOver),
      Effect.provideService(InventoryStores, stores),
      Effect.provideService(InventoryFeed, feed),
    )
  const running = yield* offered(
    processor.factory.create(processor.config.config, { id: processor.config.id, ...settings }),
  )
  yield* readiness.add("processor", running.health)

  // The receiver lives in its own scope, closed first; the observations it made still reach the processor.
  const receiverScope = yield* Scope.make()
  const source: Receiver<unknown> = yield* offered(
    receiver.factory.create(receiver.config.config, { id: receiver.config.id, ...settings }),
  ).pipe(
    Scope.provide(receiverScope),
    Effect.onError(() => Effect.andThen(feed.end, Scope.close(receiverScope, Exit.void))),
  )
  yield* readiness.add("receiver", source.health)
  yield* readiness.add("readings", source.readings)
  // The fleet page reads a cluster's node observations; a hub's page follows its events alone.
  const pageReads = fleet !== undefined && observationKindOf(receiver.factory) === "node" ? fleet : undefined
  const deliver = Queue.take(source.observations).pipe(
    pageReads !== undefined
      ? Effect.tap((observation) => Effect.sync(() => pageReads.view.observe(observation as NodeObservation)))
      : hubPage !== undefined
        ? // A hub's page starts with every cluster's GPUs as the hub's KV bucket held them.
          Effect.tap((observation) =>
            Effect.sync(() => {
              const restored = observation as ClusterObservation
              if (restored._tag === "FleetRestored") hubPage.view.seed(restored.stored)
            }),
          )
        : (taken) => taken,
    Effect.flatMap((observation) => running.observe(observation)),
    Effect.forever,
  )
  yield* Effect.addFinalizer((exit) =>
    Effect.gen(function* () {
      if (Exit.hasInterrupts(exit)) yield* shutdown.begin
      // The receiver's last observations reach the processor while it closes; the feed ends after them,
      // so the receiver's node labeller, which closes last, writes the inventory's last changes.
      const deliverRest = deliver.pipe(
        Effect.catchIf(Cause.isDone, () => Effect.void),
        Effect.interruptible,
        Effect.timeoutOption(yield* shutdown.forFlushing),
        Effect.ensuring(feed.end),
      )
      yield* Effect.all([Scope.close(receiverScope, Exit.void), deliverRest], {
        concurrency: "unbounded",
        discard: true,
      })
    }),
  )
  return deliver.pipe(Effect.catchIf(Cause.isDone, () => Effect.void))
})
