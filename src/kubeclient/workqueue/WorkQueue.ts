import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import type * as Scope from "effect/Scope"
import { type BackoffPolicy, KeyBackoff } from "./KeyBackoff.ts"
import { WorkQueueState } from "./WorkQueueState.ts"

/**
 * A rate-limited work queue with client-go's contract: duplicate keys collapse, a key is never handed to
 * two workers at once, a key added while it is processed is handed out again after `done`, and per-key
 * backoff is a separate policy (`KeyBackoff`) that `forget` resets.
 */
export interface WorkQueue<K> {
  /** Queues `key` unless it is already queued; ignored after `shutDown`. */
  readonly add: (key: K) => Effect.Effect<void>
  /** Waits for a key and marks it processing; `None` once the queue is shut down. */
  readonly get: Effect.Effect<Option.Option<K>>
  /**
   * Waits for a key, runs `handler` on it and marks it done, with no gap in between where an interruption
   * could leave the key marked processing; `false` once the queue is shut down.
   */
  readonly processNext: <E, R>(handler: (key: K) => Effect.Effect<void, E, R>) => Effect.Effect<boolean, E, R>
  /** Ends the processing of `key`: queued again if it was added meanwhile. */
  readonly done: (key: K) => Effect.Effect<void>
  /** Queues `key` once `delay` has passed; an earlier pending time for the same key wins. */
  readonly addAfter: (key: K, delay: Duration.Input) => Effect.Effect<void>
  /** Counts a failure of `key` and queues it after its backoff delay. */
  readonly addRateLimited: (key: K) => Effect.Effect<void>
  /** Clears the backoff history of `key` (after success, or when giving up on it). */
  readonly forget: (key: K) => Effect.Effect<void>
  /** How many times `key` was rate-limited since it was last forgotten. */
  readonly retries: (key: K) => Effect.Effect<number>
  /** Keys waiting to be handed out. */
  readonly len: Effect.Effect<number>
  /** `len` without an effect, for a gauge read when metrics are collected. */
  readonly depth: () => number
  /** Stops intake: adds are ignored, waiting and later `get`s answer `None`, delayed adds are cancelled. */
  readonly shutDown: Effect.Effect<void>
  /**
   * Stops intake for a last pass: keys waiting out a delay are queued at once, adds are ignored, queued
   * keys are still handed out, and `get` answers `None` once none is queued or processed.
   */
  readonly drain: Effect.Effect<void>
  /** Keys queued, being processed, or waiting out a delay. */
  readonly unfinished: Effect.Effect<number>
}

/** Builds a work queue whose delayed adds live in the current scope. */
export const make = <K>(backoff: BackoffPolicy): Effect.Effect<WorkQueue<K>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const state = new WorkQueueState<K>()
    const limiter = new KeyBackoff<K>(backoff)
    const waiters = new Set<Deferred.Deferred<void>>()
    const pendingAt = new Map<K, number>()
    const timers = yield* FiberMap.make<K>()

    const wakeOne = (): void => {
      for (const waiter of waiters) {
        waiters.delete(waiter)
        Deferred.doneUnsafe(waiter, Effect.void)
        return
      }
    }

    const wakeAll = (): void => {
      // Taken first: a getter woken here may wait again at once, and must not be woken by this same call.
      const woken = [...waiters]
      waiters.clear()
      for (const waiter of woken) {
        Deferred.doneUnsafe(waiter, Effect.void)
      }
    }

    const add = (key: K): Effect.Effect<void> =>
      Effect.sync(() => {
        if (state.add(key)) {
          wakeOne()
        }
      })

    /** Waits for a signal that a key may be queued; a waiter interrupted after its signal passes it on. */
    const awaitSignal: Effect.Effect<void> = Effect.suspend(() => {
      const waiter = Deferred.makeUnsafe<void>()
      waiters.add(waiter)
      return Deferred.await(waiter).pipe(
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            if (!waiters.delete(waiter)) {
              wakeOne()
            }
          }),
        ),
      )
    })

    const get: Effect.Effect<Option.Option<K>> = Effect.suspend(() => {
      const key = state.get()
      if (key !== undefined) {
        return Effect.succeed(Option.some(key))
      }
      return state.isShutDown || state.drained
        ? Effect.succeed(Option.none())
        : awaitSignal.pipe(Effect.flatMap(() => get))
    })

    const processed = Effect.succeed(true)
    const stopped = Effect.succeed(false)

    /** The next key through `handler`, or `false` once shut down; runs with interruption masked but in `restore`. */
    const processFrom = <E, R>(
      handler: (key: K) => Effect.Effect<void, E, R>,
      restore: <A, E1, R1>(effect: Effect.Effect<A, E1, R1>) => Effect.Effect<A, E1, R1>,
    ): Effect.Effect<boolean, E, R> => {
      const key = state.get()
      if (key !== undefined) {
        return Effect.andThen(Effect.ensuring(restore(handler(key)), done(key)), processed)
      }
      if (state.isShutDown || state.drained) {
        return stopped
      }
      return Effect.flatMap(restore(awaitSignal), () => processFrom(handler, restore))
    }

    const processNext = <E, R>(handler: (key: K) => Effect.Effect<void, E, R>): Effect.Effect<boolean, E, R> =>
      Effect.uninterruptibleMask((restore) => processFrom(handler, restore))

    const done = (key: K): Effect.Effect<void> =>
      Effect.sync(() => {
        if (state.done(key)) {
          wakeOne()
        } else if (state.drained) {
          wakeAll()
        }
      })

    const addAfter = (key: K, delay: Duration.Input): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (state.isClosed) {
          return
        }
        const millis = Duration.toMillis(Duration.fromInputUnsafe(delay))
        if (millis <= 0) {
          return yield* add(key)
        }
        const readyAt = (yield* Clock.currentTimeMillis) + millis
        const pending = pendingAt.get(key)
        if (pending !== undefined && pending <= readyAt) {
          return
        }
        pendingAt.set(key, readyAt)
        yield* FiberMap.run(
          timers,
          key,
          Effect.sleep(Duration.millis(millis)).pipe(
            Effect.andThen(
              Effect.sync(() => {
                pendingAt.delete(key)
              }),
            ),
            Effect.andThen(add(key)),
          ),
        )
      })

    const addRateLimited = (key: K): Effect.Effect<void> =>
      Random.next.pipe(Effect.flatMap((unit) => addAfter(key, Duration.millis(limiter.when(key, unit)))))

    const shutDown: Effect.Effect<void> = Effect.gen(function* () {
      state.shutDown()
      wakeAll()
      pendingAt.clear()
      yield* FiberMap.clear(timers)
    })

    const drain: Effect.Effect<void> = Effect.gen(function* () {
      if (state.isClosed) {
        return
      }
      const delayed = [...pendingAt.keys()]
      pendingAt.clear()
      yield* FiberMap.clear(timers)
      for (const key of delayed) {
        state.add(key)
      }
      state.drain()
      wakeAll()
    })

    yield* Effect.addFinalizer(() => shutDown)

    return {
      add,
      get,
      processNext,
      done,
      addAfter,
      addRateLimited,
      forget: (key) => Effect.sync(() => limiter.forget(key)),
      retries: (key) => Effect.sync(() => limiter.retries(key)),
      len: Effect.sync(() => state.length),
      depth: () => (state.isShutDown ? 0 : state.length),
      shutDown,
      drain,
      unfinished: Effect.sync(() => state.length + state.processingCount + pendingAt.size),
    }
  })
