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
 * Whether a spelling has this length. Lower-casing keeps a value's length (but for U+0130, whose lower case
 * is not ASCII), so a value of another length is none of them, and is not lower-cased to find that out.
 */
const spellingLengths = new Uint8Array(longestSpelling + 1)
for (const spelling of notAvailableSpellings) spellingLengths[spelling.length] = 1

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
  if (
    value.length <= longestSpelling &&
    spellingLengths[value.length] === 1 &&
    notAvailableSpellings.has(value.toLowerCase())
  ) {
    return undefined
  }
  return value
}

/** V8 copies a cut shorter than this; a longer one is a view that keeps the whole string it was cut from. */
const shortestView = 13

/**
 * A copy of `text` that shares no memory with the output it was cut from: a substring can keep its
 * whole source string alive, and a reported value is kept for as long as its GPU is known. A string
 * shorter than V8's shortest view is its own copy already.
 */
export const detached = (text: string): string =>
  text.length < shortestView ? text : Buffer.from(text, "utf8").toString("utf8")

/** A GPU-wide condition that nvidia-smi writes in place of a value. */
export type GpuCondition = "requires-reset" | "lost"

const shortestCondition = "gpu is lost".length
const closingBracket = 0x5d
const lowerT = 0x74

/** The condition a reported value announces (`[GPU requires reset]`, `GPU is lost`), if any. */
export const gpuConditionOf = (raw: string | undefined): GpuCondition | undefined => {
  if (raw === undefined || raw.length > 40) {
    return undefined
  }
  const value = raw.trim()
  // Both conditions end in `t` (`reset`, `lost`), or in `]` when bracketed, and are at least 11 characters
  // long: any other value, nearly every value there is, is ruled out before a copy is made of it.
  const last = value.charCodeAt(value.length - 1)
  if (value.length < shortestCondition || (last !== closingBracket && (last | 0x20) !== lowerT)) {
    return undefined
  }
  const bare = (value.startsWith("[") && value.endsWith("]") ? value.slice(1, -1) : value).trim().toLowerCase()
  if (bare === "gpu requires reset") {
    return "requires-reset"
  }
  if (bare === "gpu is lost") {
    return "lost"
  }
  return undefined
}
