import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { Health } from "../component/Component.ts"
import { closingBudget, ShutdownDeadline } from "../component/ShutdownDeadline.ts"
import type { InventoryEvent } from "../domain/InventoryEvent.ts"
import { defectMessage } from "../log/ShortMessage.ts"
import { ServiceMetrics } from "../metrics/ServiceMetrics.ts"
import type { Exporter, ExporterStats } from "../pipeline/Exporter.ts"

/** The health of every exporter by id, and of all of them: healthy only when each one is. */
export interface FanoutHealth extends Health {
  readonly exporters: Readonly<Record<string, Health>>
}

export interface FanoutOptions {
  /** Batches held for one exporter that has not taken them yet; beyond, its batches are dropped. Default 64. */
  readonly laneCapacity?: number
  /** How long an exporter may take to answer `health` or `stats`; default 1s. */
  readonly answerTimeout?: Duration.Input
  /**
   * How long closing the scope waits for held batches to reach their exporter; default 1s, less when the
   * service's shutdown deadline leaves less.
   */
  readonly shutdownTimeout?: Duration.Input
  /**
   * A hub's fan-out, whose records come from a durable stream: `export` waits until every lane has handed
   * its last batch on, and a lane hands its exporter only as many records as its buffer (`capacity`) has
   * room for, so nothing is dropped for a full buffer; the source keeps what is not taken yet. Default
   * false: `export` never waits and a full buffer drops, as a cluster's pipeline must not be held back.
   */
  readonly waitForRoom?: boolean
  /** How long the hub may wait for an exporter before it is logged and named by `health`; default 5s. */
  readonly stallAfter?: Duration.Input
}

interface LaneCounters {
  /** Records handed to the lane and not yet taken by its exporter. */
  readonly pending: number
  /** Records dropped because the exporter did not take them in time. */
  readonly dropped: number
}

/** The hand-off to one exporter: its own small buffer and fiber, so it never waits for the others. */
interface Lane {
  readonly exporter: Exporter
  readonly batches: Queue.Queue<ReadonlyArray<InventoryEvent>>
  readonly counters: SubscriptionRef.SubscriptionRef<LaneCounters>
  readonly lastStats: Ref.Ref<ExporterStats>
  /** Since when (epoch ms) the lane holds records its exporter's buffer has no room for; undefined while it has. */
  readonly blockedSince: Ref.Ref<number | undefined>
}

/** Between looks at a full exporter buffer while a hub waits for room in it. */
const roomPollInterval = Duration.millis(10)

const zeroStats: ExporterStats = { sent: 0, failed: 0, retried: 0, dropped: 0, queued: 0 }

/**
 * Hands every batch to every exporter at once. Each exporter has its own lane (a bounded buffer of
 * batches and a fiber), so one that is slow, failing or hanging only loses its own batches. On a hub
 * (`waitForRoom`) none is lost for a full buffer: the slowest exporter paces the hub instead.
 */
export class ExporterFanout extends Context.Service<
  ExporterFanout,
  {
    readonly ids: ReadonlyArray<string>
    /**
     * Hands the events to every exporter; never waits for any of them, except on a hub (`waitForRoom`):
     * there it first waits until every exporter has taken what it was handed before.
     */
    readonly export: (events: ReadonlyArray<InventoryEvent>) => Effect.Effect<void>
    /** Waits until every exporter has written or given up what was handed over, at most `timeout`. */
    readonly flush: (timeout: Duration.Input) => Effect.Effect<void>
    readonly health: Effect.Effect<FanoutHealth>
    readonly stats: Effect.Effect<Readonly<Record<string, ExporterStats>>>
  }
>()("gpu-serials/service/ExporterFanout") {
  /** A fan-out over running exporters (ids must be unique); closing the scope stops the lanes. */
  static readonly make = Effect.fnUntraced(function* (
    exporters: ReadonlyArray<Exporter>,
    options: FanoutOptions = {},
  ): Effect.fn.Return<ExporterFanout["Service"], never, Scope.Scope> {
    const laneCapacity = options.laneCapacity ?? 64
    const answerTimeout = options.answerTimeout ?? Duration.seconds(1)
    const shutdownTimeout = options.shutdownTimeout ?? Duration.seconds(1)
    const waitForRoom = options.waitForRoom ?? false
    const stallAfter = Duration.fromInputUnsafe(options.stallAfter ?? Duration.seconds(5))
    const metrics = yield* Effect.serviceOption(ServiceMetrics)
    const deadline = yield* Effect.serviceOption(ShutdownDeadline)
    const ids = exporters.map((exporter) => exporter.id)
    if (new Set(ids).size !== ids.length) return yield* Effect.die(new Error(`exporter ids are not unique: ${ids}`))

    /** Records the exporter holds now, by its own count; none known (no answer) reads as a full buffer. */
    const heldBy = (lane: Lane, capacity: number): Effect.Effect<number> =>
      Effect.suspend(() => lane.exporter.stats).pipe(
        Effect.timeoutOption(answerTimeout),
        Effect.catchDefect(() => Effect.succeedNone),
        Effect.map((answer) => (Option.isSome(answer) ? answer.value.queued : capacity)),
      )

    /** Waits one poll for room in a full buffer, counting the wait for the lane's exporter. */
    const waitOnce = (lane: Lane): Effect.Effect<void> =>
      Effect.gen(function* () {
        const before = yield* Clock.currentTimeMillis
        if ((yield* Ref.get(lane.blockedSince)) === undefined) yield* Ref.set(lane.blockedSince, before)
        yield* Effect.sleep(roomPollInterval)
        const after = yield* Clock.currentTimeMillis
        if (Option.isSome(metrics)) yield* metrics.value.hubExportWaited(lane.exporter.id, (after - before) / 1000)
      })

    /**
     * Hands a batch to the lane's exporter; on a hub, in parts that fit its buffer, each once it has room.
     * Returns the records handed so far through `handed`, so a defect drops only the rest.
     */
    const handToExporter = (lane: Lane, batch: ReadonlyArray<InventoryEvent>, handed: { count: number }) =>
      Effect.gen(function* () {
        const capacity = lane.exporter.capacity
        if (!waitForRoom || capacity === undefined) {
          yield* Effect.suspend(() => lane.exporter.export(batch))
          handed.count = batch.length
          return
        }
        while (handed.count < batch.length) {
          const room = capacity - (yield* heldBy(lane, capacity))
          if (room <= 0) {
            yield* waitOnce(lane)
            continue
          }
          yield* Ref.set(lane.blockedSince, undefined)
          const part =
            handed.count === 0 && room >= batch.length ? batch : batch.slice(handed.count, handed.count + room)
          yield* Effect.suspend(() => lane.exporter.export(part))
          handed.count += part.length
          yield* SubscriptionRef.update(lane.counters, (counters) => ({
            ...counters,
            pending: counters.pending - part.length,
          }))
        }
      })

    const lanes: Array<Lane> = []
    for (const exporter of exporters) {
      const lane: Lane = {
        exporter,
        batches: yield* Queue.dropping<ReadonlyArray<InventoryEvent>>(laneCapacity),
        counters: yield* SubscriptionRef.make<LaneCounters>({ pending: 0, dropped: 0 }),
        lastStats: yield* Ref.make(zeroStats),
        blockedSince: yield* Ref.make<number | undefined>(undefined),
      }
      lanes.push(lane)
      yield* Queue.take(lane.batches).pipe(
        Effect.flatMap((batch) => {
          const handed = { count: 0 }
          const rest = () => batch.length - (waitForRoom && exporter.capacity !== undefined ? handed.count : 0)
          return handToExporter(lane, batch, handed).pipe(
            Effect.catchDefect((defect) =>
              Effect.logWarning("exporter failed to take a batch").pipe(
                Effect.annotateLogs({ exporter: exporter.id, records: batch.length, reason: defectMessage(defect) }),
                Effect.andThen(
                  SubscriptionRef.update(lane.counters, (counters) => ({
                    ...counters,
                    dropped: counters.dropped + batch.length - handed.count,
                  })),
                ),
              ),
            ),
            Effect.ensuring(
              Effect.suspend(() =>
                SubscriptionRef.update(lane.counters, (counters) => ({
                  ...counters,
                  pending: counters.pending - rest(),
                })),
              ),
            ),
            Effect.ensuring(Ref.set(lane.blockedSince, undefined)),
          )
        }),
        Effect.forever,
        Effect.forkScoped,
      )
    }

    const waitUntilTaken = (lane: Lane): Effect.Effect<void> =>
      SubscriptionRef.changes(lane.counters).pipe(
        Stream.takeUntil((counters) => counters.pending === 0),
        Stream.runDrain,
      )

    yield* Effect.addFinalizer(() =>
      Effect.forEach(
        lanes,
        (lane) =>
          Effect.gen(function* () {
            yield* waitUntilTaken(lane).pipe(
              // Interruptible inside the deadline, not around it: closing runs uninterruptibly after an interrupt.
              Effect.interruptible,
              Effect.timeoutOption(yield* closingBudget(deadline, shutdownTimeout, "flushing")),
            )
            const counters = yield* SubscriptionRef.get(lane.counters)
            if (counters.pending > 0) {
              yield* Effect.logWarning("exporter did not take its last batches").pipe(
                Effect.annotateLogs({ exporter: lane.exporter.id, dropped: counters.pending }),
              )
            }
            yield* Queue.shutdown(lane.batches)
          }),
        { concurrency: "unbounded", discard: true },
      ),
    )

    const handOff = (lane: Lane, events: ReadonlyArray<InventoryEvent>) =>
      Effect.gen(function* () {
        yield* SubscriptionRef.update(lane.counters, (counters) => ({
          ...counters,
          pending: counters.pending + events.length,
        }))
        const taken = yield* Queue.offer(lane.batches, events)
        if (!taken) {
          yield* SubscriptionRef.update(lane.counters, (counters) => ({
            pending: counters.pending - events.length,
            dropped: counters.dropped + events.length,
          }))
        }
      })

    const handOffAll = (events: ReadonlyArray<InventoryEvent>): Effect.Effect<void> =>
      events.length === 0 ? Effect.void : Effect.forEach(lanes, (lane) => handOff(lane, events), { discard: true })

    const lanesHolding = Effect.filter(lanes, (lane) =>
      Effect.map(SubscriptionRef.get(lane.counters), (counters) => counters.pending > 0),
    )
    const allTaken = Effect.forEach(lanes, waitUntilTaken, { concurrency: "unbounded", discard: true })
    /** Whether a wait ran past `stallAfter` and was logged, until a wait ends within it. */
    let stalled = false

    /**
     * Waits until every lane has handed its last batch on (interruptible: the service's shutdown ends it),
     * with one WARN line naming the exporters still full once a wait runs past `stallAfter`, and one INFO
     * line when the first wait after that ends within it.
     */
    const waitForLanes = Effect.gen(function* () {
      if ((yield* lanesHolding).length === 0) {
        if (stalled) yield* Effect.logInfo("exporters take records again, the hub reads on")
        stalled = false
        return
      }
      const taken = yield* allTaken.pipe(Effect.timeoutOption(stallAfter))
      if (Option.isSome(taken)) {
        if (stalled) yield* Effect.logInfo("exporters take records again, the hub reads on")
        stalled = false
        return
      }
      if (!stalled) {
        const full = yield* lanesHolding
        yield* Effect.logWarning(
          "hub waits for exporters with a full buffer: no more records are read from the hub stream until they have room",
        ).pipe(
          Effect.annotateLogs({
            exporters: full.map((lane) => lane.exporter.id).join(","),
            waited: Duration.format(stallAfter),
          }),
        )
        stalled = true
      }
      yield* allTaken
    })

    const exportEvents = (events: ReadonlyArray<InventoryEvent>): Effect.Effect<void> =>
      !waitForRoom || events.length === 0
        ? handOffAll(events)
        : Effect.andThen(waitForLanes, Effect.uninterruptible(handOffAll(events)))

    const flush = (timeout: Duration.Input): Effect.Effect<void> =>
      Effect.forEach(
        lanes,
        (lane) =>
          waitUntilTaken(lane).pipe(
            Effect.andThen(Effect.suspend(() => lane.exporter.flush(timeout))),
            // The service flushes while it shuts down, uninterruptibly: the deadline must still cut it.
            Effect.interruptible,
            Effect.timeoutOption(timeout),
            Effect.catchDefect(() => Effect.void),
          ),
        { concurrency: "unbounded", discard: true },
      )

    const laneHealth = (lane: Lane): Effect.Effect<Health> =>
      Effect.gen(function* () {
        if (yield* Queue.isFull(lane.batches)) return { healthy: false, message: "not taking records" }
        const blockedSince = yield* Ref.get(lane.blockedSince)
        if (blockedSince !== undefined) {
          const blockedMs = (yield* Clock.currentTimeMillis) - blockedSince
          if (blockedMs >= Duration.toMillis(stallAfter)) {
            return {
              healthy: false,
              message: `buffer full for ${Math.round(blockedMs / 1000)}s: the hub reads no more records until it has room`,
            }
          }
        }
        const answer = yield* Effect.suspend(() => lane.exporter.health).pipe(
          Effect.timeoutOption(answerTimeout),
          Effect.catchDefect((defect) =>
            Effect.succeed(Option.some<Health>({ healthy: false, message: defectMessage(defect) })),
          ),
        )
        return Option.getOrElse(answer, () => ({
          healthy: false,
          message: `health did not answer within ${Duration.format(Duration.fromInputUnsafe(answerTimeout))}`,
        }))
      })

    const health: Effect.Effect<FanoutHealth> = Effect.forEach(lanes, laneHealth, { concurrency: "unbounded" }).pipe(
      Effect.map((answers) => {
        const byId: Record<string, Health> = {}
        const reasons: Array<string> = []
        answers.forEach((answer, index) => {
          const id = ids[index] ?? ""
          byId[id] = answer
          if (!answer.healthy) reasons.push(`${id}: ${answer.message ?? "unhealthy"}`)
        })
        return reasons.length === 0
          ? { healthy: true, exporters: byId }
          : { healthy: false, message: reasons.join("; "), exporters: byId }
      }),
    )

    const laneStats = (lane: Lane): Effect.Effect<ExporterStats> =>
      Effect.gen(function* () {
        const answer = yield* Effect.suspend(() => lane.exporter.stats).pipe(
          Effect.timeoutOption(answerTimeout),
          Effect.catchDefect(() => Effect.succeedNone),
        )
        const exporterStats = Option.isSome(answer) ? answer.value : yield* Ref.get(lane.lastStats)
        yield* Ref.set(lane.lastStats, exporterStats)
        const counters = yield* SubscriptionRef.get(lane.counters)
        return {
          ...exporterStats,
          dropped: exporterStats.dropped + counters.dropped,
          queued: exporterStats.queued + counters.pending,
        }
      })

    const stats = Effect.forEach(lanes, laneStats, { concurrency: "unbounded" }).pipe(
      Effect.map((all) => {
        const byId: Record<string, ExporterStats> = {}
        all.forEach((entry, index) => {
          byId[ids[index] ?? ""] = entry
        })
        return byId
      }),
    )

    return ExporterFanout.of({ ids, export: exportEvents, flush, health, stats })
  })
}
