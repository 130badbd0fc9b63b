/** The value that stands for every label value seen after a label's limit was reached. */
export const overflowLabelValue = "other"

/** The value that stands for an empty or absent label value. */
export const unknownLabelValue = "unknown"

/** Longest label value kept; longer ones are cut, so one value cannot bloat every scrape. */
export const maxLabelValueLength = 64

/**
 * The values one metric label may take. The first `limit` distinct values are kept as they are; any
 * later new value becomes `other`, so a label stays bounded even when a caller passes something that
 * grows with the fleet (a node name, a raw error text).
 */
export class BoundedLabel {
  private readonly seen = new Set<string>()
  readonly limit: number

  constructor(limit: number) {
    this.limit = limit
  }

  value(raw: string | undefined): string {
    const trimmed = raw?.trim() ?? ""
    const value = trimmed === "" ? unknownLabelValue : trimmed.slice(0, maxLabelValueLength)
    if (this.seen.has(value)) return value
    if (this.seen.size >= this.limit) return overflowLabelValue
    this.seen.add(value)
    return value
  }
}
