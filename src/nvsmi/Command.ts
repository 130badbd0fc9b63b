import { classifyFailureOutput, unsupportedQueryFieldIn } from "./FailureOutput.ts"
import { CommandFailed, type NvsmiError, UnsupportedQueryField } from "./NvsmiError.ts"
import { outputExcerpt } from "./OutputExcerpt.ts"
import { type OutputFormat, outputFormatOf } from "./OutputFormat.ts"
import { healthQueryFields, queryFieldsFor } from "./QueryFields.ts"

/**
 * How a node is read: `xml` always runs `nvidia-smi -q -x`; `csv` always runs the cheaper `--query-gpu`;
 * `auto` runs the CSV query and, on a driver that rejects one of its identity fields (before 570 the
 * `platform.*` fields do not exist), falls back to XML and remembers that for the node. In both CSV modes
 * a health field the driver rejects leaves its group out of the node's query from then on.
 */
export type NvsmiMode = "xml" | "csv" | "auto"

export const xmlQueryArgv: ReadonlyArray<string> = ["nvidia-smi", "-q", "-x"]

/** The CSV query of the given fields, in that column order. */
export const csvQueryArgvFor = (fields: ReadonlyArray<string>): ReadonlyArray<string> => [
  "nvidia-smi",
  `--query-gpu=${fields.join(",")}`,
  "--format=csv,noheader",
]

const noRefusedFields: ReadonlySet<string> = new Set()

/** The CSV query of a driver that accepts every field: identity and every health group. */
export const csvQueryArgv: ReadonlyArray<string> = csvQueryArgvFor(queryFieldsFor(noRefusedFields))

/** The first driver branch whose `--query-gpu` knows the `platform.*` fields. */
export const platformQueryDriverBranch = 570

/**
 * What `auto` mode can know before the first run from the node's driver branch (GPU Feature Discovery's
 * `nvidia.com/cuda.driver.major` label): an older driver rejects the platform fields, so XML at once.
 */
export const formatForDriverBranch = (branch: number | undefined): OutputFormat | undefined =>
  branch !== undefined && branch < platformQueryDriverBranch ? "xml" : undefined

/** The format to ask a node for, given the mode and what an earlier reading of that node settled on. */
export const queryFormatFor = (mode: NvsmiMode, remembered: OutputFormat | undefined): OutputFormat =>
  mode === "auto" ? (remembered ?? "csv") : mode

/**
 * The argv to exec for a format, the CSV query without the health fields the node's driver refused;
 * `nvidia-smi` is always argv[0] and never runs through a shell.
 */
export const queryArgvFor = (
  format: OutputFormat,
  refused: ReadonlySet<string> = noRefusedFields,
): ReadonlyArray<string> =>
  format === "xml" ? xmlQueryArgv : refused.size === 0 ? csvQueryArgv : csvQueryArgvFor(queryFieldsFor(refused))

/** How one run of the command ended, as the exec reports it. */
export interface CommandRun {
  readonly mode: NvsmiMode
  /** The format an earlier reading of this node settled on in `auto` mode. */
  readonly remembered?: OutputFormat | undefined
  /** The health fields the node's driver refused before, left out of the CSV query that ran. */
  readonly refused?: ReadonlySet<string> | undefined
  readonly exitCode: number
  /** The beginning of stdout, decoded: enough to recognise a document or a failure message. */
  readonly stdoutHead: string
  readonly stderr: string
}

/**
 * What to do with a finished run: parse stdout in `format`, run again with XML (and remember it for the
 * node), run the CSV query again at once without the health group of a refused field (and remember the
 * `refused` fields for the node), or give up with a typed error. A run parsed needs nothing remembered:
 * its format is the one the node's labels or an earlier fallback chose.
 */
export type CommandOutcome =
  | { readonly _tag: "Parse"; readonly format: OutputFormat }
  | { readonly _tag: "FallBackToXml"; readonly field: string; readonly remember: "xml" }
  | { readonly _tag: "LeaveOutHealthField"; readonly field: string; readonly refused: ReadonlySet<string> }
  | { readonly _tag: "Fail"; readonly error: NvsmiError }

/**
 * Decides from the exit code and the text a run printed. A CSV query the driver rejects (`Field "…" is not
 * a valid field to query.`, exit code 2) for a health field runs again without that field's group; for an
 * identity field it falls back to XML in `auto` mode and fails in `csv` mode. A non-zero exit with a
 * document on stdout is still parsed: nvidia-smi exits non-zero when some GPUs could not be read and
 * prints the others.
 */
export const decideCommandOutcome = (run: CommandRun): CommandOutcome => {
  const format = queryFormatFor(run.mode, run.remembered)
  if (format === "csv") {
    const field = unsupportedQueryFieldIn(`${run.stdoutHead}\n${run.stderr}`)
    const refused = run.refused ?? noRefusedFields
    // A field refused before was not in this query: the message cannot be about the health groups.
    if (field !== undefined && healthQueryFields.has(field) && !refused.has(field)) {
      return { _tag: "LeaveOutHealthField", field, refused: new Set([...refused, field]) }
    }
    if (field !== undefined) {
      return run.mode === "auto"
        ? { _tag: "FallBackToXml", field, remember: "xml" }
        : { _tag: "Fail", error: new UnsupportedQueryField({ field }) }
    }
  }
  if (run.exitCode === 0 || outputFormatOf(run.stdoutHead) === format) {
    return { _tag: "Parse", format }
  }
  const output = run.stderr.trim() === "" ? run.stdoutHead : `${run.stdoutHead}\n${run.stderr}`
  return {
    _tag: "Fail",
    error:
      classifyFailureOutput(output, run.exitCode) ??
      new CommandFailed({ exitCode: run.exitCode, excerpt: outputExcerpt(output) }),
  }
}
