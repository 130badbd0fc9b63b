import * as Duration from "effect/Duration"
/**
 * How long an HTTP `Retry-After` header asks to wait: delay seconds or an HTTP date, measured from
 * `nowMillis`. Absent when the header is missing or unreadable.
 */
export const retryAfterOf = (header: string | null | undefined, nowMillis: number): Duration.Duration | undefined => {
  if (header === null || header === undefined) return undefined
  const trimmed = header.trim()
  if (/^\d+$/.test(trimmed)) return Duration.seconds(Number(trimmed))
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Duration.millis(Math.max(0, date - nowMillis))
}
