import { Duration } from "effect"
import { redactUrlsIn } from "../../log/UrlRedaction.ts"
import { SinkError } from "../Sink.ts"

/** Statuses the OTLP/HTTP specification says to retry: throttled or the receiver briefly unavailable. */
const retryableStatuses: ReadonlySet<number> = new Set([429, 502, 503, 504])

/**
 * How long a `Retry-After` header asks to wait: delay seconds or an HTTP date, measured from `nowMillis`.
 * Absent when the header is missing or unreadable.
 */
export const retryAfterOf = (header: string | null, nowMillis: number): Duration.Duration | undefined => {
  if (header === null) return undefined
  const trimmed = header.trim()
  if (/^\d+$/.test(trimmed)) return Duration.seconds(Number(trimmed))
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Duration.millis(Math.max(0, date - nowMillis))
}

/** A non-2xx answer of the receiver as a sink failure: retryable for 429/502/503/504, permanent otherwise. */
export const statusFailure = (status: number, retryAfterHeader: string | null, nowMillis: number): SinkError => {
  const retryable = retryableStatuses.has(status)
  const retryAfter = retryable ? retryAfterOf(retryAfterHeader, nowMillis) : undefined
  return new SinkError({
    message: `OTLP receiver answered HTTP ${status}`,
    retryable,
    ...(retryAfter === undefined ? {} : { retryAfter }),
  })
}

/**
 * A request that got no answer (refused, reset, DNS): the receiver may be back later. The client's
 * message may quote the URL, so it is redacted.
 */
export const networkFailure = (cause: unknown): SinkError => {
  const reason =
    cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : "unknown"
  return new SinkError({ message: `OTLP request failed: ${redactUrlsIn(reason)}`, retryable: true })
}
