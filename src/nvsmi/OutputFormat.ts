import { preambleLineOf } from "./PreambleLine.ts"

export type OutputFormat = "xml" | "csv"

/**
 * The format an nvidia-smi output is in, judged from its first line once blank lines and the lines
 * nvidia-smi prints ahead of its document are skipped; `undefined` when that line is neither XML nor CSV.
 */
export const outputFormatOf = (output: string): OutputFormat | undefined => {
  let from = 0
  while (from < output.length) {
    const lineEnd = output.indexOf("\n", from)
    const line = output.slice(from, lineEnd < 0 ? output.length : lineEnd)
    from = lineEnd < 0 ? output.length : lineEnd + 1
    const content = line.trim()
    if (content === "" || preambleLineOf(line) !== undefined) {
      continue
    }
    if (content.startsWith("<")) {
      return "xml"
    }
    return content.includes(",") ? "csv" : undefined
  }
  return undefined
}
