import { describe, expect, it } from "vitest"
import { csvQueryArgv, queryArgvFor } from "../../src/nvsmi/Command.ts"
import { parseCsvReading } from "../../src/nvsmi/CsvReadingParser.ts"
import { parseNvsmiOutput } from "../../src/nvsmi/NvsmiOutput.ts"
import { queryFieldsFor } from "../../src/nvsmi/QueryFields.ts"
import { readingFrom } from "./ReadingAssertions.ts"

const identity =
  "0, GPU-25e04bdf-6a27-0a2d-f989-a9228a03f373, 1761025346615, NVIDIA GB200, 00000000:29:00.0, Disabled, 570.148.08, 1821225190819, 15, 5, 1, Switch Connected, 2, 0x983400ac35e1fa7e"

const fieldsOf = (argv: ReadonlyArray<string>): ReadonlyArray<string> =>
  (argv[1] ?? "").slice("--query-gpu=".length).split(",")

/** One row of the full query: retired pages, remapped rows, ECC, recovery action, PCIe, clock events, fabric, VBIOS. */
const fullRow = (health: ReadonlyArray<string>): string => `${identity}, ${health.join(", ")}\n`

const degradedGb200 = [
  ...["[N/A]", "[N/A]", "[N/A]"],
  ...["3", "1", "Yes", "No"],
  ...["Enabled", "12", "2", "40", "[N/A]"],
  "Drain and Reset",
  ...["5", "5", "8", "16"],
  ...["Active", "Not Active", "Not Active", "Active"],
  ...["In Progress", "Success", "32766", "889d2be1-4bbf-69e1-d3f2-97c465ee31aa", "Limited Capacity"],
  "97.00.B9.00.3D",
]

describe("health columns of --query-gpu", () => {
  it("reads every health group of the full query, by the field list gpu-serials sent", () => {
    const gpu = readingFrom(parseCsvReading(fullRow(degradedGb200), { fields: fieldsOf(csvQueryArgv) })).gpus[0]
    expect(gpu?.health).toStrictEqual({
      remappedRows: { correctable: 3, uncorrectable: 1, pending: true, failure: false },
      ecc: { enabled: true, volatileUncorrectable: 2, aggregateCorrectable: 40, volatileCorrectable: 12 },
      recoveryAction: "drain-and-reset",
      pcie: { linkGen: { current: 5, max: 5 }, linkWidth: { current: 8, max: 16 } },
      clockEvents: ["hw-slowdown", "sw-thermal-slowdown"],
      fabric: {
        state: "in-progress",
        status: "success",
        cliqueId: "32766",
        clusterUuid: "889d2be1-4bbf-69e1-d3f2-97c465ee31aa",
        summary: "limited-capacity",
      },
      vbios: "97.00.B9.00.3D",
    })
    expect(gpu?.platform?.chassisSerial).toBe("1821225190819")
  })

  it("reads the full query without being told its fields, as `gpu-serials parse` does", () => {
    const output = fullRow(degradedGb200)
    expect(readingFrom(parseNvsmiOutput(output)).gpus[0]?.health?.recoveryAction).toBe("drain-and-reset")
    expect(readingFrom(parseCsvReading(output)).gpus[0]?.health?.vbios).toBe("97.00.B9.00.3D")
  })

  it("maps the columns of a query without refused groups, the older clock-event spelling included", () => {
    const refused = new Set(["ecc.mode.current", "gpu_recovery_action", "clocks_event_reasons.hw_slowdown"])
    const fields = fieldsOf(queryArgvFor("csv", refused))
    expect(fields).toStrictEqual(queryFieldsFor(refused))
    const row = `${identity}, 0, 2, No, [N/A], [N/A], [N/A], [N/A], 4, 4, 16, 16, Not Active, Active, Not Active, Not Active, [N/A], [N/A], [N/A], [N/A], [N/A], 86.08.24.00.23\n`
    expect(readingFrom(parseCsvReading(row, { fields })).gpus[0]?.health).toStrictEqual({
      retiredPages: { singleBit: 0, doubleBit: 2, pending: false },
      pcie: { linkGen: { current: 4, max: 4 }, linkWidth: { current: 16, max: 16 } },
      clockEvents: ["hw-thermal-slowdown"],
      vbios: "86.08.24.00.23",
    })
  })

  it("maps health columns by a header, aliases and units included", () => {
    const output =
      "uuid, retired_pages.sbe, retired_pages.dbe, remapped_rows.failure, pcie.link.width.current, clocks_throttle_reasons.hw_slowdown, fabric.cliqueId\n" +
      "GPU-25e04bdf-6a27-0a2d-f989-a9228a03f373, 1, 63, Yes, 8, Active, 7\n"
    expect(readingFrom(parseCsvReading(output)).gpus[0]?.health).toStrictEqual({
      retiredPages: { singleBit: 1, doubleBit: 63 },
      remappedRows: { failure: true },
      pcie: { linkWidth: { current: 8 } },
      clockEvents: ["hw-slowdown"],
      fabric: { cliqueId: "7" },
    })
  })

  it("keeps a GPU whose health cells say [GPU requires reset], reading the recovery action as a reset", () => {
    const health = degradedGb200.map((cell, position) =>
      position === 12 || position === 3 ? "[GPU requires reset]" : cell,
    )
    const reading = readingFrom(parseCsvReading(fullRow(health), { fields: fieldsOf(csvQueryArgv) }))
    expect(reading.failures).toStrictEqual([])
    expect(reading.gpus[0]?.health?.recoveryAction).toBe("reset")
    expect(reading.gpus[0]?.health?.remappedRows).toStrictEqual({ uncorrectable: 1, pending: true, failure: false })
  })

  it("still fails a GPU whose identity cells say [GPU requires reset]", () => {
    const cells = identity.split(", ")
    const failing = [...cells.slice(0, 2), "[GPU requires reset]", ...cells.slice(3)].join(", ")
    const second = identity.replace("0, GPU-25e04bdf", "1, GPU-35e04bdf")
    const output = `${failing}, ${degradedGb200.join(", ")}\n${second}, ${degradedGb200.join(", ")}\n`
    const reading = readingFrom(parseCsvReading(output, { fields: fieldsOf(csvQueryArgv) }))
    expect(reading.gpus.map((gpu) => gpu.index)).toStrictEqual([1])
    expect(reading.failures.map((failure) => [failure.kind, failure.index])).toStrictEqual([["requires-reset", 0]])
  })

  it("leaves health absent when the query had no health column or every cell was not available", () => {
    expect(readingFrom(parseCsvReading(`${identity}\n`)).gpus[0]?.health).toBeUndefined()
    const unavailable = degradedGb200.map(() => "[N/A]")
    expect(readingFrom(parseCsvReading(fullRow(unavailable))).gpus[0]?.health).toBeUndefined()
  })
})
