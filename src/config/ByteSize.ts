import * as Result from "effect/Result"

/**
 * Byte sizes the way Kubernetes quantities write them: plain bytes (`1048576`), binary suffixes
 * (`512Ki`, `8Mi`, `1Gi`) or decimal ones (`500k`, `8M`, `1G`).
 */

const MULTIPLIERS: ReadonlyMap<string, number> = new Map([
  ["", 1],
  ["Ki", 1024],
  ["Mi", 1024 ** 2],
  ["Gi", 1024 ** 3],
  ["Ti", 1024 ** 4],
  ["k", 1000],
  ["M", 1000 ** 2],
  ["G", 1000 ** 3],
  ["T", 1000 ** 4],
])

const BYTE_SIZE = /^(\d+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/

/** Parses a byte size to a number of bytes; the error text names the accepted forms. */
export const parseByteSize = (text: string): Result.Result<number, string> => {
  const match = BYTE_SIZE.exec(text.trim())
  const multiplier = MULTIPLIERS.get(match?.[2] ?? "")
  if (match === null || match[1] === undefined || multiplier === undefined) {
    return Result.fail(`invalid byte size ${JSON.stringify(text)} (use bytes or a suffix: 512Ki, 8Mi, 1Gi)`)
  }
  const bytes = Number(match[1]) * multiplier
  if (!Number.isSafeInteger(bytes)) return Result.fail(`byte size ${JSON.stringify(text)} is too large`)
  return Result.succeed(bytes)
}

/** Formats bytes with the largest binary suffix that divides them exactly (`8Mi`), else plain bytes. */
export const formatByteSize = (bytes: number): string => {
  for (const [suffix, multiplier] of [
    ["Ti", 1024 ** 4],
    ["Gi", 1024 ** 3],
    ["Mi", 1024 ** 2],
    ["Ki", 1024],
  ] as const) {
    if (bytes >= multiplier && bytes % multiplier === 0) return `${bytes / multiplier}${suffix}`
  }
  return String(bytes)
}
