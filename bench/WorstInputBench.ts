import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { defaultMaxOutputBytes } from "../src/nvsmi/XmlReadingParser.ts"
import { againstBudget } from "./Sampling.ts"
import { worstInputs } from "./WorstInputs.ts"

const runs = 3
const timeBudgetMs = 2_000
const rssBudgetMb = 300
const childScript = fileURLToPath(new URL("./WorstInputParse.ts", import.meta.url))

interface ParseRun {
  readonly ms: number
  readonly rssBeforeMb: number
  readonly peakRssMb: number
  readonly outcome: string
}

/** The smallest and the median of a few figures, as `min / median` with no decimals. */
const minAndMedian = (values: ReadonlyArray<number>): { readonly min: number; readonly median: number } => {
  const sorted = [...values].sort((a, b) => a - b)
  return { min: sorted[0] ?? 0, median: sorted[Math.floor(sorted.length / 2)] ?? 0 }
}

const parseInChild = (path: string, format: "xml" | "csv"): ParseRun => {
  const child = spawnSync(process.execPath, [childScript, path, format], { encoding: "utf8", timeout: 120_000 })
  if (child.status !== 0) throw new Error(`the parse of ${path} failed: ${child.stderr.slice(0, 500)}`)
  return JSON.parse(child.stdout) as ParseRun
}

/**
 * The worst outputs up to the output cap, each parsed in a fresh process (so its peak RSS is its own),
 * against the bounds of 2 s and 300 MB: min and median of 3 runs.
 */
export const worstInputBench = (): ReadonlyArray<string> => {
  const directory = mkdtempSync(join(tmpdir(), "gpu-serials-worst-"))
  const lines = [
    `worst inputs (-q -x and --query-gpu CSV up to the ${defaultMaxOutputBytes / 1024 / 1024} MiB cap, fresh process each, ` +
      `min / median of ${runs}; bounds ${timeBudgetMs / 1000} s and ${rssBudgetMb} MB)`,
  ]
  try {
    for (const input of worstInputs(defaultMaxOutputBytes)) {
      const path = join(directory, `output.${input.format}`)
      writeFileSync(path, input.document)
      const results = Array.from({ length: runs }, () => parseInChild(path, input.format))
      const time = minAndMedian(results.map((result) => result.ms))
      const rss = minAndMedian(results.map((result) => result.peakRssMb))
      const before = minAndMedian(results.map((result) => result.rssBeforeMb))
      lines.push(
        `  ${input.name} (${(input.document.length / 1024 / 1024).toFixed(1)} MiB): ` +
          `${time.min.toFixed(0)} / ${time.median.toFixed(0)} ms (${againstBudget(time.median, timeBudgetMs)}), ` +
          `peak RSS ${rss.min.toFixed(0)} / ${rss.median.toFixed(0)} MB (${againstBudget(rss.median, rssBudgetMb)}, ` +
          `${before.median.toFixed(0)} MB before parsing); ` +
          `${results[0]?.outcome ?? ""}`,
      )
    }
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
  return lines
}
