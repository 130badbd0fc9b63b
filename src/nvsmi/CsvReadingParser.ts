import * as Result from "effect/Result"
import type { GpuFailure, NodeReading } from "../domain/NodeReading.ts"
import { classifyFailureOutput } from "./FailureOutput.ts"
import { gpuConditionOf } from "./NotAvailable.ts"
import { EmptyOutput, MalformedOutput, NotNvidiaSmiOutput, type NvsmiError, TruncatedOutput } from "./NvsmiError.ts"
import { outputExcerpt } from "./OutputExcerpt.ts"
import { outputLimits } from "./OutputLimits.ts"
import { preambleLineOf } from "./PreambleLine.ts"
import { gpuQueryFields, queryFieldsFor } from "./QueryFields.ts"
import { queryPropertyNames } from "./QueryPropertyNames.ts"
import type { ReportedGpu, ReportedGpuField } from "./ReportedGpu.ts"
import type { ReportedHealthField } from "./ReportedHealth.ts"
import { type ReportedReading, readingOf } from "./ReportedReading.ts"

export interface CsvReadingOptions {
  /** The `--query-gpu` fields in column order, used when the output has no header line. */
  readonly fields?: ReadonlyArray<string>
  /**
   * The output is an exec's whole stdout as nvidia-smi printed it, which ends every row with a newline: a
   * last row without one is where the output was cut, even when it has all its cells (the cut fell in
   * its last value). A capture read from a file may have lost its final newline, so `parse` leaves it off.
   */
  readonly wholeOutput?: boolean
}

type NodeColumn = "driverVersion" | "kmdVersion" | "attachedGpus"

type Column =
  | { readonly _tag: "Gpu"; readonly field: ReportedGpuField }
  | { readonly _tag: "Health"; readonly field: ReportedHealthField }
  | { readonly _tag: "Node"; readonly field: NodeColumn }
  | { readonly _tag: "Ignored" }

const gpuColumn = (field: ReportedGpuField): Column => ({ _tag: "Gpu", field })
const healthColumn = (field: ReportedHealthField): Column => ({ _tag: "Health", field })
const nodeColumn = (field: NodeColumn): Column => ({ _tag: "Node", field })
const ignoredColumn: Column = { _tag: "Ignored" }

const knownColumns: ReadonlyMap<string, Column> = new Map([
  ["index", gpuColumn("index")],
  ["uuid", gpuColumn("uuid")],
  ["gpu_uuid", gpuColumn("uuid")],
  ["serial", gpuColumn("serial")],
  ["gpu_serial", gpuColumn("serial")],
  ["name", gpuColumn("product")],
  ["gpu_name", gpuColumn("product")],
  ["pci.bus_id", gpuColumn("pciBusId")],
  ["gpu_bus_id", gpuColumn("pciBusId")],
  ["mig.mode.current", gpuColumn("migMode")],
  ["platform.chassis_serial_number", gpuColumn("chassisSerial")],
  ["platform.slot_number", gpuColumn("slotNumber")],
  ["platform.tray_index", gpuColumn("trayIndex")],
  ["platform.host_id", gpuColumn("hostId")],
  ["platform.peer_type", gpuColumn("peerType")],
  ["platform.module_id", gpuColumn("moduleId")],
  ["platform.gpu_fabric_guid", gpuColumn("fabricGuid")],
  ["retired_pages.single_bit_ecc.count", healthColumn("retiredSingleBit")],
  ["retired_pages.sbe", healthColumn("retiredSingleBit")],
  ["retired_pages.double_bit.count", healthColumn("retiredDoubleBit")],
  ["retired_pages.dbe", healthColumn("retiredDoubleBit")],
  ["retired_pages.pending", healthColumn("retiredPending")],
  ["remapped_rows.correctable", healthColumn("remappedCorrectable")],
  ["remapped_rows.uncorrectable", healthColumn("remappedUncorrectable")],
  ["remapped_rows.pending", healthColumn("remappedPending")],
  ["remapped_rows.failure", healthColumn("remappedFailure")],
  ["ecc.mode.current", healthColumn("eccMode")],
  ["ecc.errors.corrected.volatile.total", healthColumn("volatileCorrectable")],
  ["ecc.errors.uncorrected.volatile.total", healthColumn("volatileUncorrectable")],
  ["ecc.errors.corrected.aggregate.total", healthColumn("aggregateCorrectable")],
  ["ecc.errors.uncorrected.aggregate.total", healthColumn("aggregateUncorrectable")],
  ["gpu_recovery_action", healthColumn("recoveryAction")],
  ["pcie.link.gen.current", healthColumn("linkGenCurrent")],
  ["pcie.link.gen.max", healthColumn("linkGenMax")],
  ["pcie.link.width.current", healthColumn("linkWidthCurrent")],
  ["pcie.link.width.max", healthColumn("linkWidthMax")],
  ["clocks_event_reasons.hw_slowdown", healthColumn("hwSlowdown")],
  ["clocks_throttle_reasons.hw_slowdown", healthColumn("hwSlowdown")],
  ["clocks_event_reasons.hw_thermal_slowdown", healthColumn("hwThermalSlowdown")],
  ["clocks_throttle_reasons.hw_thermal_slowdown", healthColumn("hwThermalSlowdown")],
  ["clocks_event_reasons.hw_power_brake_slowdown", healthColumn("hwPowerBrakeSlowdown")],
  ["clocks_throttle_reasons.hw_power_brake_slowdown", healthColumn("hwPowerBrakeSlowdown")],
  ["clocks_event_reasons.sw_thermal_slowdown", healthColumn("swThermalSlowdown")],
  ["clocks_throttle_reasons.sw_thermal_slowdown", healthColumn("swThermalSlowdown")],
  ["fabric.state", healthColumn("fabricState")],
  ["fabric.status", healthColumn("fabricStatus")],
  ["fabric.cliqueid", healthColumn("fabricCliqueId")],
  ["fabric.clusteruuid", healthColumn("fabricClusterUuid")],
  ["fabric.health.summary", healthColumn("fabricSummary")],
  ["vbios_version", healthColumn("vbios")],
  ["driver_version", nodeColumn("driverVersion")],
  ["kmd_version", nodeColumn("kmdVersion")],
  ["count", nodeColumn("attachedGpus")],
])

const fullQueryFields = queryFieldsFor(new Set())

const headerCell = /^[A-Za-z_][A-Za-z0-9_.]*(?: \[[^\]]*\])?$/
const unitSuffix = / \[[^\]]*\]$/

const columnNameOf = (cell: string): string => cell.replace(unitSuffix, "").toLowerCase()

const columnOf = (name: string): Column => knownColumns.get(columnNameOf(name)) ?? ignoredColumn

/** The columns of each list of query fields, made once: a reader asks most nodes with the same list. */
const columnsOfFields = new WeakMap<ReadonlyArray<string>, ReadonlyArray<Column>>()

const columnsOf = (fields: ReadonlyArray<string>): ReadonlyArray<Column> => {
  let columns = columnsOfFields.get(fields)
  if (columns === undefined) {
    columns = fields.map(columnOf)
    columnsOfFields.set(fields, columns)
  }
  return columns
}

const isHeader = (cells: ReadonlyArray<string>, minimumCells: number): boolean =>
  cells.length >= minimumCells &&
  cells.every((cell) => headerCell.test(cell)) &&
  cells.some((cell) => knownColumns.has(columnNameOf(cell)))

/** The names a header line of nvidia-smi is made of: the columns read, and every other query property. */
const headerWords: ReadonlySet<string> = new Set([...knownColumns.keys(), ...queryPropertyNames])

/** A header cell as far as the output got: a name, perhaps with a unit not yet closed; or nothing yet. */
const headerCellStart = /^(?:[A-Za-z_][A-Za-z0-9_.]*(?: \[[^\]]*\]?)?)?$/

/**
 * Whether a last line, cut before its newline, is a header the output stopped inside: every cell before
 * the last is a header cell, the last is the start of one (it may be empty, cut after a comma), and a known
 * column is among them or begins with what the last one's name has so far.
 */
const isCutHeader = (cells: ReadonlyArray<string>): boolean => {
  const complete = cells.slice(0, -1)
  const last = cells.at(-1) ?? ""
  if (!complete.every((cell) => headerCell.test(cell)) || !headerCellStart.test(last)) return false
  const lastName = last.replace(/ \[.*$/, "").toLowerCase()
  return (
    complete.some((cell) => headerWords.has(columnNameOf(cell))) ||
    (lastName !== "" && [...headerWords].some((name) => name.startsWith(lastName)))
  )
}

const isLocatableHeader = (cells: ReadonlyArray<string>): boolean =>
  isHeader(cells, 2) &&
  cells.some((cell) => {
    const column = columnOf(cell)
    return column._tag === "Gpu" && column.field === "uuid"
  })

/**
 * Reader of `nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]`. A header line maps the
 * columns by name (units such as `[MiB]` ignored); without one, the columns follow `fields` (by default
 * the query gpu-serials sends to a driver that accepts every field, or its identity fields alone, by the
 * number of cells). Output whose first line is neither is searched for a `--query-gpu` block with a
 * header naming `uuid`, so a capture that contains one (e.g. a bug report) can still be read. A row with
 * `[GPU requires reset]` or `GPU is lost` in a cell that is not a health value is a failure, not a GPU;
 * health columns (retired pages, remapped rows, ECC, ...) fill the GPU's health. Output that
 * ends inside its header line, or inside a row (a last row without its newline that is short of cells, or any such row of an exec's `wholeOutput`), is
 * `truncated`; one beyond `outputLimits` (lines, line length, GPUs, value length) `malformed`.
 */
export const parseCsvReading = (
  output: string,
  options: CsvReadingOptions = {},
): Result.Result<NodeReading, NvsmiError> => {
  // The limit stops the split early: millions of empty lines would cost hundreds of megabytes.
  const lines = output.split("\n", outputLimits.maxLines + 1)
  if (lines.length > outputLimits.maxLines) {
    return failWith(new MalformedOutput({ detail: `the CSV output has more than ${outputLimits.maxLines} lines` }))
  }
  const longLine = lines.findIndex((line) => line.length > outputLimits.maxLineLength)
  if (longLine >= 0) {
    return failWith(
      new MalformedOutput({
        detail: `line ${longLine + 1} of the CSV output is longer than ${outputLimits.maxLineLength} characters`,
      }),
    )
  }
  const preambleFailures: Array<GpuFailure> = []
  let first = 0
  for (; first < lines.length; first++) {
    const line = lines[first] ?? ""
    if (line.trim() === "") {
      continue
    }
    const preamble = preambleLineOf(line)
    if (preamble === undefined) {
      break
    }
    if (preamble._tag === "DeviceHandle") {
      preambleFailures.push(preamble.failure)
    }
  }
  if (preambleFailures.length > outputLimits.maxGpus) {
    return failWith(tooManyDeviceHandleLines())
  }
  if (first === lines.length) {
    return preambleFailures.length === 0
      ? failWith(new EmptyOutput())
      : readingOf({ format: "csv", gpus: [], preambleFailures })
  }
  const firstCells = cellsOf(lines[first] ?? "")
  if (first === lines.length - 1 && isCutHeader(firstCells)) {
    return failWith(new TruncatedOutput({ detail: "the CSV output ends inside its header line" }))
  }
  if (isHeader(firstCells, 1)) {
    return readRows(lines, first + 1, firstCells.map(columnOf), preambleFailures, options.wholeOutput === true)
  }
  const fields = options.fields ?? (firstCells.length === fullQueryFields.length ? fullQueryFields : gpuQueryFields)
  if (firstCells.length === fields.length || firstCells.some((cell) => gpuConditionOf(cell) !== undefined)) {
    return readRows(lines, first, columnsOf(fields), preambleFailures, options.wholeOutput === true)
  }
  for (let header = first + 1; header < lines.length; header++) {
    const cells = cellsOf(lines[header] ?? "")
    if (header === lines.length - 1 && isCutHeader(cells)) {
      return failWith(new TruncatedOutput({ detail: "the CSV output ends inside a header line" }))
    }
    if (isLocatableHeader(cells)) {
      return readRows(lines, header + 1, cells.map(columnOf), preambleFailures, options.wholeOutput === true)
    }
  }
  return failWith(classifyFailureOutput(output) ?? new NotNvidiaSmiOutput({ excerpt: outputExcerpt(output) }))
}

const readRows = (
  lines: ReadonlyArray<string>,
  start: number,
  columns: ReadonlyArray<Column>,
  preambleFailures: Array<GpuFailure>,
  wholeOutput: boolean,
): Result.Result<NodeReading, NvsmiError> => {
  const gpus: Array<ReportedGpu> = []
  const node: { -readonly [Field in NodeColumn]?: string } = {}
  for (let lineIndex = start; lineIndex < lines.length; lineIndex++) {
    const line = lines[lineIndex] ?? ""
    if (line.trim() === "") {
      break
    }
    const preamble = preambleLineOf(line)
    if (preamble !== undefined) {
      if (preamble._tag === "DeviceHandle") {
        if (preambleFailures.length >= outputLimits.maxGpus) {
          return failWith(tooManyDeviceHandleLines())
        }
        preambleFailures.push(preamble.failure)
      }
      continue
    }
    if (gpus.length >= outputLimits.maxGpus) {
      return failWith(new MalformedOutput({ detail: `the CSV output lists more than ${outputLimits.maxGpus} GPUs` }))
    }
    const cells = cellsOf(line)
    const tooLong = cells.findIndex(
      (cell, position) => cell.length > outputLimits.maxValueLength && columns[position]?._tag !== "Ignored",
    )
    if (tooLong >= 0) {
      return failWith(
        new MalformedOutput({
          detail: `cell ${tooLong + 1} of CSV row ${gpus.length + 1} is longer than ${outputLimits.maxValueLength} characters`,
        }),
      )
    }
    // A condition in a health column is that value's, not the GPU's: the GPU is still read.
    const condition = cells.find(
      (cell, position) => columns[position]?._tag !== "Health" && gpuConditionOf(cell) !== undefined,
    )
    // nvidia-smi ends every row with a newline: a last row without one is where the output was cut.
    if (lineIndex === lines.length - 1 && (cells.length < columns.length || wholeOutput)) {
      return failWith(new TruncatedOutput({ detail: `the CSV output ends inside row ${gpus.length + 1}` }))
    }
    if (cells.length !== columns.length) {
      if (condition === undefined) {
        return failWith(
          new MalformedOutput({
            detail: `CSV row ${gpus.length + 1} has ${cells.length} cells where ${columns.length} were expected`,
          }),
        )
      }
      gpus.push({ condition })
      continue
    }
    const gpu: { -readonly [Field in ReportedGpuField]?: string } = {}
    let health: { -readonly [Field in ReportedHealthField]?: string } | undefined
    if (condition !== undefined) {
      gpu.condition = condition
    }
    columns.forEach((column, position) => {
      const cell = cells[position]
      if (column._tag === "Gpu") {
        gpu[column.field] ??= cell
      } else if (column._tag === "Health") {
        health ??= {}
        health[column.field] ??= cell
      } else if (column._tag === "Node") {
        node[column.field] ??= cell
      }
    })
    gpus.push(health === undefined ? gpu : { ...gpu, health })
  }
  const reported: ReportedReading = {
    format: "csv",
    gpus,
    preambleFailures,
    driverVersion: node.driverVersion,
    kmdVersion: node.kmdVersion,
    attachedGpus: node.attachedGpus,
  }
  return readingOf(reported)
}

/** The cells of one CSV line; nvidia-smi separates them with ", " and does not quote, but quotes are honoured. */
const cellsOf = (line: string): Array<string> => {
  const text = line.endsWith("\r") ? line.slice(0, -1) : line
  if (!text.includes('"')) {
    return text.split(",").map((cell) => cell.trim())
  }
  const cells: Array<string> = []
  let cell = ""
  let quoted = false
  let wasQuoted = false
  for (let position = 0; position < text.length; position++) {
    const character = text[position]
    if (quoted) {
      if (character === '"' && text[position + 1] === '"') {
        cell += '"'
        position++
      } else if (character === '"') {
        quoted = false
      } else {
        cell += character
      }
    } else if (character === '"' && cell.trim() === "") {
      quoted = true
      wasQuoted = true
      cell = ""
    } else if (character === ",") {
      cells.push(wasQuoted ? cell : cell.trim())
      cell = ""
      wasQuoted = false
    } else if (!(wasQuoted && /\s/.test(character ?? ""))) {
      cell += character
    }
  }
  cells.push(wasQuoted ? cell : cell.trim())
  return cells
}

const tooManyDeviceHandleLines = (): NvsmiError =>
  new MalformedOutput({ detail: `the output lists more than ${outputLimits.maxGpus} GPUs whose device handle failed` })

const failWith = (error: NvsmiError): Result.Result<NodeReading, NvsmiError> => Result.fail(error)
