import { redactUrlsIn } from "../../log/UrlRedaction.ts"
import { retryAfterOf } from "../exporterhelper/RetryAfter.ts"
import { SinkError } from "../exporterhelper/Sink.ts"

/** A status the endpoint may answer differently later: request timeout, throttling, a server error. */
export const isRetryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500

/**
 * A non-2xx answer as a sink failure: 408, 429 and 5xx are retryable after the endpoint's
 * `Retry-After`, every other status is permanent. The message names the status only, never the body.
 */
export const statusFailure = (status: number, retryAfterHeader: string | undefined, nowMillis: number): SinkError => {
  const retryable = isRetryableStatus(status)
  const retryAfter = retryable ? retryAfterOf(retryAfterHeader, nowMillis) : undefined
  return new SinkError({
    message: `HTTP endpoint answered HTTP ${status}`,
    retryable,
    ...(retryAfter === undefined ? {} : { retryAfter }),
  })
}

const codeOf = (cause: unknown): string | undefined =>
  cause instanceof Error && "code" in cause && typeof cause.code === "string" ? cause.code : undefined

/**
 * A request that got no answer: refused, reset, DNS, TLS handshake (a certificate the exporter does not
 * trust may be replaced by one it does). All are retryable except a request Node refuses to build, such
 * as a header value with a line break, which no retry changes. The message is the client's, its URLs redacted.
 */
export const networkFailure = (cause: unknown): SinkError => {
  const reason = cause instanceof Error ? cause.message : "unknown"
  const code = codeOf(cause)
  return new SinkError({
    message: `HTTP request failed: ${redactUrlsIn(reason)}`,
    retryable: code === undefined || !code.startsWith("ERR_INVALID"),
  })
}
