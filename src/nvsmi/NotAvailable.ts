const notAvailableSpellings = new Set([
  "n/a",
  "not found",
  "none",
  "not available",
  "not supported",
  "unknown error",
  "function not found",
  "insufficient permissions",
  "requested functionality has been deprecated",
  "gpu is lost",
  "gpu requires reset",
])

const longestSpelling = Math.max(...Array.from(notAvailableSpellings, (spelling) => spelling.length))

/**
 * The value nvidia-smi reported, trimmed, or `undefined` when the text is one of the many ways it says
 * "not available": `N/A`, `[N/A]`, empty, `Not Found`, `None`, `Unknown Error`, any bracketed sentinel...
 */
export const availableValue = (raw: string | undefined): string | undefined => {
  const value = printedValue(raw)
  return value === undefined ? undefined : detached(value)
}

/**
 * What `availableValue` gives, still sharing memory with the output it was cut from: for a value that is
 * turned into a number or a flag at once, never for one that is kept.
 */
export const printedValue = (raw: string | undefined): string | undefined => {
  if (raw === undefined) {
    return undefined
  }
  const value = raw.trim()
  if (value === "") {
    return undefined
  }
  if (value.startsWith("[") && value.endsWith("]")) {
    return undefined
  }
  if (value.length <= longestSpelling && notAvailableSpellings.has(value.toLowerCase())) {
    return undefined
  }
  return value
}

/**
 * A copy of `text` that shares no memory with the output it was cut from: a substring can keep its
 * whole source string alive, and a reported value is kept for as long as its GPU is known.
 */
export const detached = (text: string): string => Buffer.from(text, "utf8").toString("utf8")

/** A GPU-wide condition that nvidia-smi writes in place of a value. */
export type GpuCondition = "requires-reset" | "lost"

/** The condition a reported value announces (`[GPU requires reset]`, `GPU is lost`), if any. */
export const gpuConditionOf = (raw: string | undefined): GpuCondition | undefined => {
  if (raw === undefined || raw.length > 40) {
    return undefined
  }
  const value = raw.trim()
  const bare = (value.startsWith("[") && value.endsWith("]") ? value.slice(1, -1) : value).trim().toLowerCase()
  if (bare === "gpu requires reset") {
    return "requires-reset"
  }
  if (bare === "gpu is lost") {
    return "lost"
  }
  return undefined
}
