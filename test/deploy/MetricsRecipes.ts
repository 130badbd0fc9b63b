import { readFileSync } from "node:fs"
import { join } from "node:path"
import { repositoryRoot } from "../cli/GpuSerialsCli.ts"

/**
 * The PromQL recipes of docs/metrics.md: every line of its `promql` blocks between "PromQL recipes" and
 * "Alerts", a continuation line (two spaces in) joined to the line before.
 */
export const promqlRecipes = (): ReadonlyArray<string> => {
  const page = readFileSync(join(repositoryRoot, "docs/metrics.md"), "utf8")
  const section = page.slice(page.indexOf("\n## PromQL recipes\n"), page.indexOf("\n## Alerts\n"))
  return [...section.matchAll(/```promql\n([\s\S]*?)```/g)].flatMap(([, block = ""]) =>
    block
      .replace(/\n {2}/g, " ")
      .split("\n")
      .filter((line) => line.trim() !== ""),
  )
}
