/** Rules and units the settings of the service and of its components share. */

/** Text must not be empty (after trimming). */
export const required =
  (message: string) =>
  (value: string): string | undefined =>
    value.trim() === "" ? message : undefined

export const positive =
  (message: string) =>
  (value: number): string | undefined =>
    value > 0 ? undefined : message

export const notNegative =
  (message: string) =>
  (value: number): string | undefined =>
    value >= 0 ? undefined : message

/** Whether `text` is a URL with one of `schemes` (`"http:"`) and a host. */
export const isUrlWithScheme = (text: string, schemes: ReadonlyArray<string>): boolean => {
  if (!URL.canParse(text)) return false
  const url = new URL(text)
  return schemes.includes(url.protocol) && url.hostname !== ""
}

export const optionalHttpUrl =
  (message: string) =>
  (value: string): string | undefined =>
    value === "" || isUrlWithScheme(value, ["http:", "https:"]) ? undefined : message

// Durations in milliseconds, for the settings' bounds: every delay of this process stays far below
// MAX_TIMER_MILLIS (SettingBounds.ts), the longest a timer holds.
export const SECOND = 1000
export const MINUTE = 60 * SECOND
export const HOUR = 3_600_000
export const DAY = 24 * HOUR
export const WEEK = 7 * DAY
/** For retention kept by another server, not by a timer of this process. */
export const YEAR = 365 * DAY
