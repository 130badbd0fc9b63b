import { Duration } from "effect"
import { redactValue } from "../../config/Redact.ts"
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

const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi

/** The text with the credentials of every URL in it hidden, as the client's messages may quote the endpoint. */
const redactUrls = (text: string): string => text.replace(URL_IN_TEXT, (url) => String(redactValue("userinfo", url)))

/**
 * A request that got no answer (refused, reset, DNS): the receiver may be back later. The message
 * ends up in health and log lines, so URLs in it lose their credentials.
 */
export const networkFailure = (cause: unknown): SinkError => {
  const reason =
    cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : "unknown"
  return new SinkError({ message: `OTLP request failed: ${redactUrls(reason)}`, retryable: true })
}
