import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as SynchronizedRef from "effect/SynchronizedRef"
import type { ComponentFactory, Health } from "../../component/Component.ts"
import { ComponentStartError } from "../../component/ComponentStartError.ts"
import { closingBudget, ShutdownDeadline } from "../../component/ShutdownDeadline.ts"
import { type ComponentSettings, configuredBy } from "../../config/ComponentSettings.ts"
import type { Setting } from "../../config/Setting.ts"
import { type InventoryChange, mergeChanges, upsert } from "../../domain/InventoryChange.ts"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import { type InventoryEventKind, inventoryEventKinds } from "../../domain/InventoryEventKind.ts"
import type { KnownGpu } from "../../domain/KnownGpu.ts"
import type { NodeObservation } from "../../domain/NodeObservation.ts"
import { defectMessage } from "../../log/ShortMessage.ts"
import { knownGpuInfoFields } from "../../metrics/GpuInfoLabels.ts"
import { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import { EventConsumer } from "../../pipeline/EventConsumer.ts"
import { InventoryFeed } from "../../pipeline/InventoryFeed.ts"
import { type InventoryStore, InventoryStoreError, InventoryStores } from "../../pipeline/InventoryStore.ts"
import type { InventoryRules } from "./Inventory.ts"
import {
  everyKnownGpu,
  fromKnown,
  type Inventory,
  inventorySnapshot,
  type Transition,
  tick,
  transition,
} from "./Inventory.ts"
import { type InventoryConfig, inventorySettings, storeSetting } from "./InventoryConfig.ts"
import { SharedGpuFacts } from "./SharedGpuFacts.ts"
import { SharedVerdicts } from "./SharedVerdicts.ts"

export interface InventoryProcessorOptions {
  /** The component id, for errors and logs; `inventory` unless given. */
  readonly id?: string
  readonly settings: InventoryRules
  /** Takes every batch of events, in order; must not wait for exporters (the exporter fan-out's `export`). */
  readonly sink: (events: ReadonlyArray<InventoryEvent>) => Effect.Effect<void>
  readonly store: InventoryStore["Service"]
  /** Where every change of the inventory is published as it happens (the GPUs loaded at start first); none unless given. */
  readonly feed?: InventoryFeed["Service"]
  /** How often expired grace periods and due reports are looked for; 5 seconds unless given. */
  readonly tickInterval?: Duration.Input
  /** Deadline of one store call; 10 seconds unless given. */
  readonly storeTimeout?: Duration.Input
}

/**
 * How many verdicts and details the inventory keeps once across readings: the few a fleet's GPUs mostly
 * share (healthy, one per product and driver) stay kept; the rare ones go when the table starts anew.
 */
const sharedVerdictsBound = 512

/** How many repeated GPU facts (names, versions, bus ids; platforms apart) the inventory keeps once across readings. */
const sharedFactsBound = 1024

/** Attempts to load the store at start before the processor gives up starting. */
const loadAttempts = 3

/** Capped backoff between writes of changes the store refused; the changes wait, one per GPU. */
/** Writes of the last changes at closing that may lose a compare-and-set and be written again. */
const lastWriteConflictRetries = 2

const writeRetry = Schedule.exponential(Duration.seconds(1)).pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30)))),
)

const countsByKind = (events: ReadonlyArray<InventoryEvent>): ReadonlyArray<readonly [InventoryEventKind, number]> =>
  inventoryEventKinds
    .map((kind) => [kind, events.filter((event) => event.record.event === kind).length] as const)
    .filter(([, count]) => count > 0)

/**
 * The `inventory` processor (PRODUCT.md §4) as a running component: it holds the known inventory,
 * turns each node observation into events, emits the periodic reports and the removals of nodes gone
 * past their grace, and keeps the store of current locations up to date.
 *
 * Observations enter through `observe`, one call per observation: it returns once the events are
 * handed to the sink (which never waits for exporters), so a receiver worker's deadline covers the
 * hand-off and a fast receiver is slowed, not queued without bound. Observations and ticks are
 * applied one at a time, so the sink receives batches in the order the inventory changed. Store
 * writes happen behind: changes wait, one per GPU, and are written in order, retried with a capped
 * backoff while the store fails (reported by `health`), and written once more at shutdown.
 */
export class InventoryProcessor extends Context.Service<
  InventoryProcessor,
  {
    /** Applies one observation and hands its events, if any, to the sink. */
    readonly observe: (observation: NodeObservation) => Effect.Effect<void>
    /** Writes the changes not yet in the store now. */
    readonly flush: Effect.Effect<void, InventoryStoreError>
    /** Unhealthy while the store refuses the changes. */
    readonly health: Effect.Effect<Health>
  }
>()("gpu-serials/processor/inventory/InventoryProcessor") {
  /**
   * Loads the store, registers the inventory gauges and starts the ticks; closing the scope stops
   * the ticks and writes what the store has not got yet.
   */
  static readonly make = Effect.fnUntraced(function* (
    options: InventoryProcessorOptions,
  ): Effect.fn.Return<InventoryProcessor["Service"], ComponentStartError, Scope.Scope | ServiceMetrics> {
    const id = options.id ?? "inventory"
    const { store } = options
    const settings: InventoryRules = {
      ...options.settings,
      verdicts: options.settings.verdicts ?? new SharedVerdicts(sharedVerdictsBound),
      facts: options.settings.facts ?? new SharedGpuFacts(sharedFactsBound),
    }
    const metrics = yield* ServiceMetrics
    const storeTimeout = options.storeTimeout ?? Duration.seconds(10)
    const feed = options.feed
    const publish = (changes: ReadonlyArray<InventoryChange>): Effect.Effect<void> =>
      feed === undefined ? Effect.void : feed.publish(changes)
    const tickInterval = options.tickInterval ?? Duration.seconds(5)

    const withDeadline = <A>(
      call: Effect.Effect<A, InventoryStoreError>,
      operation: "load" | "apply",
    ): Effect.Effect<A, InventoryStoreError> =>
      call.pipe(
        Effect.timeoutOrElse({
          duration: storeTimeout,
          orElse: () =>
            Effect.fail(
              new InventoryStoreError({
                store: store.kind,
                operation,
                message: `no answer within ${Duration.format(Duration.fromInputUnsafe(storeTimeout))}`,
                conflict: false,
              }),
            ),
        }),
      )

    const loaded = yield* withDeadline(store.load, "load").pipe(
      Effect.retry(Schedule.exponential(Duration.seconds(1)).pipe(Schedule.upTo({ times: loadAttempts - 1 }))),
      Effect.mapError(
        (error) =>
          new ComponentStartError({
            component: id,
            message: `cannot load the known inventory from the ${store.kind} store: ${error.message}`,
          }),
      ),
    )
    const startedAt = new Date(yield* Clock.currentTimeMillis)
    const inventory = yield* SynchronizedRef.make<Inventory>(fromKnown(loaded, startedAt, settings))
    yield* metrics.observeInventory(() => inventorySnapshot(SynchronizedRef.getUnsafe(inventory)))
    yield* metrics.observeGpus({
      gpus: () => everyKnownGpu(SynchronizedRef.getUnsafe(inventory)),
      fields: (known: KnownGpu) => knownGpuInfoFields(known, settings.cluster),
    })
    yield* publish(loaded.map(upsert))
    if (loaded.length > 0) {
      yield* Effect.logInfo("inventory loaded").pipe(Effect.annotateLogs({ store: store.kind, gpus: loaded.length }))
    }

    const pending = yield* Ref.make<ReadonlyMap<string, InventoryChange>>(new Map())
    const storeProblem = yield* Ref.make<string | undefined>(undefined)
    const wake = yield* Queue.sliding<true>(1)
    const writing = yield* Semaphore.make(1)

    /** One write of every waiting change; what the store refused waits again, under anything newer. */
    const writePending: Effect.Effect<void, InventoryStoreError> = writing.withPermit(
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          const batch = yield* Ref.getAndSet(pending, new Map())
          if (batch.size === 0) return
          yield* restore(withDeadline(store.apply([...batch.values()]), "apply")).pipe(
            Effect.onExit((exit) =>
              Exit.isSuccess(exit)
                ? Ref.set(storeProblem, undefined)
                : Ref.update(pending, (later) => mergeChanges(batch, later.values())),
            ),
          )
        }),
      ),
    )

    const deadline = yield* Effect.serviceOption(ShutdownDeadline)
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        const budget = yield* closingBudget(deadline, storeTimeout, "flushing")
        const written = yield* writePending.pipe(
          // A write the closing interrupted may still have landed: the store then refuses the batch as a
          // conflict, having learnt the new revisions, and the same batch written again wins.
          Effect.retry({ times: lastWriteConflictRetries, while: (error) => error.conflict }),
          Effect.catch((error) =>
            Effect.logWarning("inventory store did not take the last changes").pipe(
              Effect.annotateLogs({ store: error.store, reason: error.message }),
            ),
          ),
          // Interruptible inside the deadline, not around it: closing runs uninterruptibly after an interrupt.
          Effect.interruptible,
          Effect.timeoutOption(budget),
        )
        if (Option.isNone(written)) {
          yield* Effect.logWarning("inventory store did not take the last changes").pipe(
            Effect.annotateLogs({ store: store.kind, reason: `no answer within ${Duration.format(budget)}` }),
          )
        }
      }),
    )

    yield* Queue.take(wake).pipe(
      Effect.andThen(
        writePending.pipe(
          Effect.tapError((error) =>
            Ref.set(storeProblem, error.message).pipe(
              Effect.andThen(
                Effect.logWarning("inventory store write failed, retrying").pipe(
                  Effect.annotateLogs({ store: error.store, reason: error.message, conflict: error.conflict }),
                ),
              ),
            ),
          ),
          Effect.retry(writeRetry),
        ),
      ),
      Effect.forever,
      Effect.forkScoped,
    )

    const deliver = Effect.fnUntraced(function* (step: Transition) {
      if (step.events.length > 0) {
        yield* Effect.suspend(() => options.sink(step.events)).pipe(
          Effect.catchDefect((defect) =>
            Effect.logWarning("inventory sink failed to take a batch").pipe(
              Effect.annotateLogs({ records: step.events.length, reason: defectMessage(defect) }),
            ),
          ),
        )
        for (const [kind, count] of countsByKind(step.events)) {
          yield* metrics.inventoryEvents(kind, count)
        }
      }
      if (step.changes.length > 0) {
        yield* publish(step.changes)
        yield* Ref.update(pending, (waiting) => mergeChanges(waiting, step.changes))
        yield* Queue.offer(wake, true)
      }
    })

    const advance = (next: (state: Inventory) => Transition): Effect.Effect<void> =>
      SynchronizedRef.modifyEffect(inventory, (state) => {
        const step = next(state)
        return deliver(step).pipe(Effect.as([undefined, step.state] as const))
      })

    yield* Clock.currentTimeMillis.pipe(
      Effect.flatMap((millis) => advance((state) => tick(state, new Date(millis), settings))),
      Effect.repeat(Schedule.spaced(tickInterval)),
      Effect.forkScoped,
    )

    // Untraced: a named Effect.fn captures a stack trace and opens a span on every observation.
    const observe = Effect.fnUntraced(function* (observation: NodeObservation) {
      yield* advance((state) => transition(state, observation, settings))
    })

    const health: Effect.Effect<Health> = Ref.get(storeProblem).pipe(
      Effect.map((problem) =>
        problem === undefined ? { healthy: true } : { healthy: false, message: `inventory store: ${problem}` },
      ),
    )

    return InventoryProcessor.of({
      observe,
      flush: writePending,
      health,
    })
  })
}

/**
 * The `inventory` processor factory. Its `create` hands events to the `EventConsumer` (the exporter
 * fan-out's `export`), publishes its changes on the `InventoryFeed`, and opens the store its config names
 * from the `InventoryStores` the service offers.
 */
export const factory: ComponentFactory<
  "processor",
  InventoryConfig,
  InventoryProcessor["Service"],
  ServiceMetrics | EventConsumer | InventoryStores | InventoryFeed
> & { readonly settings: ComponentSettings<InventoryConfig>; readonly storeSetting: Setting<string> } = {
  kind: "processor",
  type: "inventory",
  ...configuredBy(inventorySettings),
  storeSetting,
  create: (config, settings) =>
    Effect.gen(function* () {
      const consumer = yield* EventConsumer
      const feed = yield* InventoryFeed
      const store = yield* (yield* InventoryStores).named(config.store)
      return yield* InventoryProcessor.make({
        id: settings.id,
        settings: {
          cluster: settings.clusterName,
          reportIntervalMs: config.reportIntervalMs,
          removalGraceMs: config.removalGraceMs,
          health: config.health,
        },
        sink: consumer.export,
        store,
        feed,
      })
    }),
}
