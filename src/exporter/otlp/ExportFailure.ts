import { redactUrlsIn } from "../../log/UrlRedaction.ts"
import { retryAfterOf } from "../exporterhelper/RetryAfter.ts"
import { SinkError } from "../exporterhelper/Sink.ts"

/** Statuses the OTLP/HTTP specification says to retry: throttled or the receiver briefly unavailable. */
const retryableStatuses: ReadonlySet<number> = new Set([429, 502, 503, 504])

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
