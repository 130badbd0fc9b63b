import type { ParsedCommandLine } from "./CommandLine.ts"
import type { UsageProblem } from "./UsageFailure.ts"

/** The clusters a command is limited to; empty: every cluster. */
export interface ClusterSelection {
  readonly clusters: ReadonlyArray<string>
  readonly problems: ReadonlyArray<UsageProblem>
}

/**
 * The clusters of every `--cluster` given: repeated (`--cluster east --cluster west`) or as a comma list
 * (`--cluster east,west`), each name once, in the order given. An empty name is a problem naming the flag.
 */
export const clusterSelection = (commandLine: ParsedCommandLine): ClusterSelection => {
  const clusters: Array<string> = []
  const problems: Array<UsageProblem> = []
  for (const option of commandLine.given) {
    if (option.name !== "cluster") continue
    const names = option.value.split(",").map((name) => name.trim())
    if (names.some((name) => name === "")) problems.push({ message: `${option.option} needs a cluster name` })
    for (const name of names) if (name !== "" && !clusters.includes(name)) clusters.push(name)
  }
  return { clusters, problems }
}
