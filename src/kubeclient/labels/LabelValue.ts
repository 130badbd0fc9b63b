/** The most characters a Kubernetes label value may have. */
export const maxLabelValueLength = 63

const labelValuePattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/

/**
 * Whether the API server accepts `value` as a label value: at most 63 characters, alphanumerics with
 * `-`, `_` and `.` inside, beginning and ending with an alphanumeric (or empty).
 */
export const isLabelValue = (value: string): boolean =>
  value.length <= maxLabelValueLength && labelValuePattern.test(value)
