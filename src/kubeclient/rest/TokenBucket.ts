import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Latch from "effect/Latch"
/** `qps` tokens a second, at most `burst` saved up. */
export interface TokenRate {
  readonly qps: number
  readonly burst: number
}

/** Tokens available at `atMillis`; negative when waiting callers have reserved tokens not yet refilled. */
export interface TokenBucketState {
  readonly tokens: number
  readonly atMillis: number
}

export const fullBucket = (rate: TokenRate, nowMillis: number): TokenBucketState => ({
  tokens: rate.burst,
  atMillis: nowMillis,
})

/**
 * Reserves one token at `nowMillis`: refills at `qps` up to `burst`, takes a token and says how long the
 * caller waits for it (0 while the burst lasts). Reservations queue up in the order they were made.
 */
export const reserveToken = (
  state: TokenBucketState,
  rate: TokenRate,
  nowMillis: number,
): readonly [waitMillis: number, next: TokenBucketState] => {
  const elapsed = Math.max(0, nowMillis - state.atMillis)
  const refilled = Math.min(rate.burst, state.tokens + (elapsed * rate.qps) / 1000)
  const tokens = refilled - 1
  const waitMillis = tokens >= 0 ? 0 : Math.ceil((-tokens * 1000) / rate.qps)
  return [waitMillis, { tokens, atMillis: Math.max(nowMillis, state.atMillis) }]
}

/** Gives back a reserved token that was not used (its caller was interrupted while waiting). */
export const returnToken = (state: TokenBucketState, rate: TokenRate): TokenBucketState => ({
  ...state,
  tokens: Math.min(rate.burst, state.tokens + 1),
})

/** What a call that yields to the others does next. */
export type YieldingTurn =
  | { readonly _tag: "Reserve" }
  | { readonly _tag: "YieldToWaiting" }
  | { readonly _tag: "YieldToQueued"; readonly millis: number }
  | { readonly _tag: "AwaitSpareToken"; readonly millis: number }

/** Who a yielding call lets go first: callers of `take` waiting for a token, and calls queued to come. */
export interface YieldedTo {
  readonly waiting: number
  /** Calls its caller has queued that will ask for tokens (pods waiting to be read). */
  readonly queued: number
}

/**
 * The turn of a call that yields at `nowMillis`: it reserves a token once one is spare (there now, no
 * `take` waits for one and no call is queued to come), or once it has yielded for `yieldLimitMillis`, so
 * that it never starves; until then it waits while `take`s wait, looks again a token's time later while
 * calls are queued, or waits until the next token is due.
 */
export const yieldingTurn = (
  state: TokenBucketState,
  rate: TokenRate,
  nowMillis: number,
  yieldedTo: YieldedTo,
  yieldedMillis: number,
  yieldLimitMillis: number,
): YieldingTurn => {
  if (yieldedMillis >= yieldLimitMillis) return { _tag: "Reserve" }
  if (yieldedTo.waiting > 0) return { _tag: "YieldToWaiting" }
  if (yieldedTo.queued > 0) return { _tag: "YieldToQueued", millis: Math.max(1, Math.ceil(1000 / rate.qps)) }
  const elapsed = Math.max(0, nowMillis - state.atMillis)
  const tokens = Math.min(rate.burst, state.tokens + (elapsed * rate.qps) / 1000)
  if (tokens >= 1) return { _tag: "Reserve" }
  // The epsilon keeps a float's rounding from pushing the wake-up a millisecond past the token.
  return { _tag: "AwaitSpareToken", millis: Math.max(1, Math.ceil(((1 - tokens) * 1000) / rate.qps - 1e-9)) }
}

/** The longest a yielding call lets the calls of `take` go first before it reserves its token among them. */
export const defaultYieldLimitMs = 2_000

/**
 * One token bucket shared by every Kubernetes API call, client-go's (`qps`, `burst`, tokens in the order
 * they are asked for), with one call class that yields: `takeYielding` takes only spare tokens, those no
 * `take` waits for nor a call queued to come, for `yieldLimitMs` at most.
 */
export interface TokenBucket {
  /** Waits for a token, in the order of asking. */
  readonly take: Effect.Effect<void>
  /**
   * Waits for a token as `take` does, but not past `deadlineMillis` (a Clock time): `true` once the token
   * is taken; `false` at the deadline when the token would come after it, the reservation given back then
   * as an interrupted `take` gives it back. One timer, no fiber of its own.
   */
  readonly takeBy: (deadlineMillis: number) => Effect.Effect<boolean>
  /**
   * Waits for a spare token (one no `take` waits for, while `queued()` says no call is queued to come) and
   * takes it; after `yieldLimitMs` it reserves a token as `take` does, behind the `take`s waiting then,
   * and waits for it.
   */
  readonly takeYielding: (queued: () => number) => Effect.Effect<void>
  /** Calls in `takeYielding` that have not got their token yet. */
  readonly yieldingCalls: () => number
}

export const make = (rate: TokenRate, yieldLimitMs: number = defaultYieldLimitMs): Effect.Effect<TokenBucket> =>
  Effect.gen(function* () {
    let state = fullBucket(rate, yield* Clock.currentTimeMillis)
    /** Callers of `take` sleeping until their token is there. */
    let firstInLineWaiting = 0
    let yielding = 0
    /** Open while no caller of `take` waits: the yielding calls wait on it. */
    const noneWaiting = yield* Latch.make(true)

    const waitedFor = Effect.sync(() => {
      firstInLineWaiting -= 1
      if (firstInLineWaiting === 0) noneWaiting.openUnsafe()
    })

    /** Reserves a token at `nowMillis` and says how long to wait for it. */
    const reserveAt = (nowMillis: number): number => {
      const [waitMillis, next] = reserveToken(state, rate, nowMillis)
      state = next
      return waitMillis
    }

    const waitForToken = (waitMillis: number) =>
      Effect.sleep(Duration.millis(waitMillis)).pipe(
        Effect.onInterrupt(() => Effect.sync(() => (state = returnToken(state, rate)))),
      )

    /** A `take` that has to wait counts as waiting from its reservation on, so no yielding call slips in. */
    const take = Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(
        Effect.clockWith((clock) =>
          Effect.sync(() => {
            const waitMillis = reserveAt(clock.currentTimeMillisUnsafe())
            if (waitMillis > 0) {
              firstInLineWaiting += 1
              noneWaiting.closeUnsafe()
            }
            return waitMillis
          }),
        ),
        (waitMillis) =>
          waitMillis > 0 ? restore(waitForToken(waitMillis)).pipe(Effect.ensuring(waitedFor)) : Effect.void,
      ),
    )

    const tokenTaken: Effect.Effect<boolean> = Effect.succeed(true)
    /** The deadline came before the token: the reservation is given back, as an interrupted wait gives it. */
    const deadlinePassed: Effect.Effect<boolean> = Effect.sync(() => {
      state = returnToken(state, rate)
      return false
    })

    /** `take` with a deadline: the wait is one sleep, to the token or to the deadline, whichever is first. */
    const takeBy = (deadlineMillis: number): Effect.Effect<boolean> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.clockWith((clock) => {
          const now = clock.currentTimeMillisUnsafe()
          const waitMillis = reserveAt(now)
          if (waitMillis === 0) return tokenTaken
          firstInLineWaiting += 1
          noneWaiting.closeUnsafe()
          const leftMillis = Math.max(0, deadlineMillis - now)
          const waited =
            waitMillis <= leftMillis
              ? Effect.as(restore(waitForToken(waitMillis)), true)
              : Effect.andThen(restore(waitForToken(leftMillis)), deadlinePassed)
          return Effect.ensuring(waited, waitedFor)
        }),
      )

    /** Yields until the turn of a yielding call to reserve its token. */
    const awaitTurn = Effect.fnUntraced(function* (queued: () => number) {
      const since = yield* Clock.currentTimeMillis
      while (true) {
        const now = yield* Clock.currentTimeMillis
        const yieldedTo = { waiting: firstInLineWaiting, queued: queued() }
        const turn = yieldingTurn(state, rate, now, yieldedTo, now - since, yieldLimitMs)
        const left = Duration.millis(Math.max(1, since + yieldLimitMs - now))
        switch (turn._tag) {
          case "Reserve":
            return
          case "YieldToWaiting":
            yield* Effect.timeoutOption(noneWaiting.await, left)
            break
          case "YieldToQueued":
          case "AwaitSpareToken":
            yield* Effect.sleep(Duration.min(Duration.millis(turn.millis), left))
            break
        }
      }
    })

    const takeYielding = (queued: () => number) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.sync(() => (yielding += 1)).pipe(
          Effect.andThen(restore(awaitTurn(queued))),
          Effect.andThen(Effect.clockWith((clock) => Effect.sync(() => reserveAt(clock.currentTimeMillisUnsafe())))),
          Effect.flatMap((waitMillis) => (waitMillis > 0 ? restore(waitForToken(waitMillis)) : Effect.void)),
          Effect.ensuring(Effect.sync(() => (yielding -= 1))),
        ),
      )

    return { take, takeBy, takeYielding, yieldingCalls: () => yielding }
  })
