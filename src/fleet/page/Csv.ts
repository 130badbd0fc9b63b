import type { Gpu } from "./ApiTypes.ts"

/** The columns of a CSV download, in the order of the results table. */
export const csvColumns = [
  "serial",
  "uuid",
  "node",
  "machine",
  "chassis",
  "model",
  "index",
  "pciBusId",
  "moduleId",
  "health",
  "lastSeen",
  "since",
] as const

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break; a field a spreadsheet would
 * read as a formula (`=`, `+`, `-`, `@`, tab, carriage return first) is prefixed with `'` so opening the
 * file never runs a value a cluster reported.
 */
export const csvField = (value: string): string => {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

const rowOf = (gpu: Gpu): ReadonlyArray<string> => [
  gpu.gpu,
  gpu.uuid,
  gpu.node,
  gpu.machine,
  gpu.chassis,
  gpu.product ?? "",
  String(gpu.index),
  gpu.pciBusId ?? "",
  gpu.moduleId === undefined ? "" : String(gpu.moduleId),
  gpu.health?.state ?? "unknown",
  gpu.lastSeen,
  gpu.since,
]

/** The GPUs as CSV text: a header line, then one line per GPU, lines ended by CRLF as RFC 4180 has it. */
export const csvOf = (gpus: ReadonlyArray<Gpu>): string =>
  [csvColumns, ...gpus.map(rowOf)].map((row) => `${row.map(csvField).join(",")}\r\n`).join("")

/** The most GPUs one download holds: the page never fetches the whole fleet, so a download is bounded too. */
export const csvMaxRows = 10_000

/** The file name of a download: the search's words, safe for any file system. */
export const csvFileName = (label: string): string => {
  const words = label
    .toLowerCase()
    .replaceAll(/[^a-z0-9._-]+/g, "-")
    .replaceAll(/^-+|-+$/g, "")
  return `gpus${words === "" ? "" : `-${words.slice(0, 60)}`}.csv`
}
