import { type LedgerEntry, type LedgerEntryKind, ledgerEntryKinds } from "./LedgerEntry.ts"

/** One entry as a line of the ledger file: a JSON object and a newline. */
export const ledgerLine = (entry: LedgerEntry): string => `${JSON.stringify(entry)}\n`

/** The fields each kind of entry must have as strings, beside its stamp. */
const textFields: Readonly<Record<LedgerEntryKind, ReadonlyArray<string>>> = {
  "node-joined": ["node", "providerId"],
  "node-left": ["node"],
  "pod-created": ["node", "pod"],
  "pod-ready": ["node", "pod"],
  "pod-unready": ["node", "pod"],
  "pod-terminating": ["node", "pod"],
  "pod-deleted": ["node", "pod", "reason"],
  "gpu-placed": ["uuid", "serial", "node", "providerId", "cause"],
  "gpu-gone": ["uuid", "node"],
  "gpu-departed": ["uuid", "serial", "node", "providerId", "toCluster", "toNode", "toProviderId"],
  "gpu-arrived": ["uuid", "serial", "node", "providerId", "fromCluster", "fromNode", "fromProviderId", "health"],
  "driver-failed": ["node", "failure"],
  "driver-repaired": ["node"],
  "gpu-health": ["uuid", "node", "from", "to"],
  "slice-published": ["node", "slice"],
  "dra-mismatch": ["node", "uuid", "kind"],
}

const healthStates: ReadonlyArray<unknown> = ["ok", "degraded", "failed"]

const isKind = (value: unknown): value is LedgerEntryKind =>
  typeof value === "string" && (ledgerEntryKinds as ReadonlyArray<string>).includes(value)

/**
 * The entries of a ledger file (JSON lines, as `ledgerLine` writes them), in order. Blank lines are
 * skipped; a line that is not a ledger entry fails with its line number.
 */
export const parseLedger = (text: string): ReadonlyArray<LedgerEntry> => {
  const entries: Array<LedgerEntry> = []
  const lines = text.split("\n")
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") continue
    const problem = (what: string) => new Error(`ledger line ${index + 1}: ${what}`)
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      throw problem("not JSON")
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw problem("not a JSON object")
    const fields = value as Record<string, unknown>
    if (!isKind(fields.entry)) throw problem(`unknown entry ${JSON.stringify(fields.entry)}`)
    if (typeof fields.seq !== "number" || typeof fields.resourceVersion !== "number")
      throw problem("seq and resourceVersion must be numbers")
    if (typeof fields.time !== "string" || Number.isNaN(Date.parse(fields.time))) throw problem("time is not a time")
    for (const field of textFields[fields.entry])
      if (typeof fields[field] !== "string") throw problem(`${fields.entry} needs ${field} as a string`)
    if (fields.entry === "driver-failed" && !Array.isArray(fields.unreadable))
      throw problem("driver-failed needs unreadable as a list")
    if (fields.entry === "gpu-health" && !(healthStates.includes(fields.from) && healthStates.includes(fields.to)))
      throw problem("gpu-health needs from and to among ok, degraded, failed")
    if ((fields.entry === "gpu-departed" || fields.entry === "gpu-arrived") && typeof fields.swap !== "number")
      throw problem(`${fields.entry} needs swap as a number`)
    if (fields.entry === "gpu-arrived" && !healthStates.includes(fields.health))
      throw problem("gpu-arrived needs health among ok, degraded, failed")
    if (fields.entry === "slice-published" && (typeof fields.generation !== "number" || !Array.isArray(fields.gpus)))
      throw problem("slice-published needs generation as a number and gpus as a list")
    if (
      fields.entry === "dra-mismatch" &&
      fields.kind !== "missing-from-slices" &&
      fields.kind !== "missing-from-reading"
    )
      throw problem("dra-mismatch needs kind missing-from-slices or missing-from-reading")
    entries.push(value as LedgerEntry)
  }
  return entries
}
