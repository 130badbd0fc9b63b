/**
 * The range a numeric setting accepts: documented in the configuration reference and `--help`, checked
 * wherever settings are read. With `zeroDisables`, 0 is
 * accepted too, as the value that turns the feature off.
 */
export interface Bounds {
  readonly min: number
  readonly max: number
  readonly zeroDisables?: boolean
}

/**
 * The longest delay a Node.js timer holds (2^31-1 ms, about 24.8 days); a longer one fires at once, so
 * no interval or timeout may exceed it.
 */
export const MAX_TIMER_MILLIS = 2 ** 31 - 1

/** Writes a bound the way the setting's type writes values (`1s`, `8Mi`, `1024`). */
export type BoundFormat = (value: number) => string

/** The range as the reference shows it: `1..1024`, `0 or 1s..24h`. */
export const boundsText = (bounds: Bounds, format: BoundFormat): string =>
  `${bounds.zeroDisables === true ? "0 or " : ""}${format(bounds.min)}..${format(bounds.max)}`

/** Whether the value lies in the range. */
export const withinBounds = (bounds: Bounds, value: number): boolean =>
  (bounds.zeroDisables === true && value === 0) || (value >= bounds.min && value <= bounds.max)

/**
 * The message for a value out of range, starting with the setting's label:
 * `workers must be between 1 and 1024, got 1000000000`; the value is left out when `reveal` is false.
 */
export const outOfBoundsMessage = (
  label: string,
  bounds: Bounds,
  format: BoundFormat,
  value: number,
  reveal: boolean,
): string => {
  const range = `between ${format(bounds.min)} and ${format(bounds.max)}`
  const allowed = bounds.zeroDisables === true ? `0 (disabled) or ${range}` : range
  return `${label} must be ${allowed}${reveal ? `, got ${format(value)}` : ""}`
}
