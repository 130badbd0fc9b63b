import type { GpuRecord } from "../../../domain/GpuRecord.ts"
import { healthText } from "../../HealthText.ts"
import { terminalText } from "../../TerminalText.ts"

interface Column {
  readonly title: string
  readonly value: (record: GpuRecord) => string
}

const absent = "-"

const columns: ReadonlyArray<Column> = [
  { title: "INDEX", value: (record) => String(record.index) },
  { title: "UUID", value: (record) => record.uuid },
  {
    title: "SERIAL",
    value: (record) => (record.gpu === "" ? absent : `${record.gpu}${record.serialShared ? "*" : ""}`),
  },
  { title: "PRODUCT", value: (record) => record.product ?? absent },
  { title: "PCI BUS ID", value: (record) => record.pciBusId ?? absent },
  { title: "MODULE", value: (record) => (record.moduleId === undefined ? absent : String(record.moduleId)) },
  { title: "MIG", value: (record) => record.migMode ?? absent },
  { title: "CHASSIS", value: (record) => (record.chassis === "" ? absent : record.chassis) },
  // Last: its reasons make it the widest cell, and the last one is not padded.
  { title: "HEALTH", value: (record) => healthText(record.health) },
]

/**
 * Records as an aligned text table, one GPU a row; `*` marks a serial another GPU shares; HEALTH is the
 * verdict on the GPU's condition (`-` when the capture says nothing of it). Control characters in a
 * value are shown escaped.
 */
export const recordTable = (records: ReadonlyArray<GpuRecord>): string => {
  const rows = [
    columns.map((column) => column.title),
    ...records.map((record) => columns.map((column) => terminalText(column.value(record)))),
  ]
  const widths = columns.map((_, at) => Math.max(...rows.map((row) => (row[at] ?? "").length)))
  return rows
    .map((row) =>
      row
        .map((cell, at) => (at === row.length - 1 ? cell : cell.padEnd(widths[at] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")
    .concat("\n")
}
