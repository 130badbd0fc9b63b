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

/**
 * Whether a call that yields to others may reserve its token now: once no caller of `take` waits for one,
 * or once it has yielded for `yieldLimitMillis`, so that it never starves.
 */
export const yieldingMayReserve = (
  firstInLineWaiting: number,
  yieldedMillis: number,
  yieldLimitMillis: number,
): boolean => firstInLineWaiting === 0 || yieldedMillis >= yieldLimitMillis

/** The longest a yielding call lets the calls of `take` go first before it reserves its token among them. */
export const defaultYieldLimitMs = 2_000

/**
 * One token bucket shared by every Kubernetes API call, client-go's (`qps`, `burst`, tokens in the order
 * they are asked for), with one call class that yields: `takeYielding` lets every `take` that waits go
 * first, for `yieldLimitMs` at most.
 */
export interface TokenBucket {
  /** Waits for a token, in the order of asking. */
  readonly take: Effect.Effect<void>
  /**
   * Waits until no `take` waits for a token, or `yieldLimitMs` passed, then reserves a token as `take`
   * does and waits for it.
   */
  readonly takeYielding: Effect.Effect<void>
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

    /** Reserves a token and says how long to wait for it; a `take` that waits counts as waiting at once. */
    const reserve = (firstInLine: boolean) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          const [waitMillis, next] = reserveToken(state, rate, clock.currentTimeMillisUnsafe())
          state = next
          if (waitMillis > 0 && firstInLine) {
            firstInLineWaiting += 1
            noneWaiting.closeUnsafe()
          }
          return waitMillis
        }),
      )

    const waitForToken = (waitMillis: number) =>
      Effect.sleep(Duration.millis(waitMillis)).pipe(
        Effect.onInterrupt(() => Effect.sync(() => (state = returnToken(state, rate)))),
      )

    const take = Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(reserve(true), (waitMillis) =>
        waitMillis > 0 ? restore(waitForToken(waitMillis)).pipe(Effect.ensuring(waitedFor)) : Effect.void,
      ),
    )

    const yieldToWaiting = Effect.gen(function* () {
      const since = yield* Clock.currentTimeMillis
      while (true) {
        const now = yield* Clock.currentTimeMillis
        if (yieldingMayReserve(firstInLineWaiting, now - since, yieldLimitMs)) return
        yield* Effect.timeoutOption(noneWaiting.await, Duration.millis(since + yieldLimitMs - now))
      }
    })

    const takeYielding = Effect.uninterruptibleMask((restore) =>
      Effect.sync(() => (yielding += 1)).pipe(
        Effect.andThen(restore(yieldToWaiting)),
        Effect.andThen(reserve(false)),
        Effect.flatMap((waitMillis) => (waitMillis > 0 ? restore(waitForToken(waitMillis)) : Effect.void)),
        Effect.ensuring(Effect.sync(() => (yielding -= 1))),
      ),
    )

    return { take, takeYielding, yieldingCalls: () => yielding }
  })
