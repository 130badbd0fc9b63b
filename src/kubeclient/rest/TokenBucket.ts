import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
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

/** One token bucket shared by every Kubernetes API call: `take` waits for a token. */
export interface TokenBucket {
  readonly take: Effect.Effect<void>
}

export const make = (rate: TokenRate): Effect.Effect<TokenBucket> =>
  Effect.gen(function* () {
    const state = yield* Ref.make(fullBucket(rate, yield* Clock.currentTimeMillis))
    const take = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const waitMillis = yield* Ref.modify(state, (current) => reserveToken(current, rate, now))
      if (waitMillis > 0) {
        yield* Effect.sleep(Duration.millis(waitMillis)).pipe(
          Effect.onInterrupt(() => Ref.update(state, (current) => returnToken(current, rate))),
        )
      }
    })
    return { take }
  })
