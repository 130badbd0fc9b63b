import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseCsvReading } from "../../src/nvsmi/CsvReadingParser.ts"
import { parseNvsmiOutput } from "../../src/nvsmi/NvsmiOutput.ts"
import { describeWithFixtures, readFixture, readFixtureText } from "../support/fixtures.ts"
import { errorFrom, readingFrom } from "./ReadingAssertions.ts"

const gb200Rows = [
  "0, GPU-25e04bdf-6a27-0a2d-f989-a9228a03f373, 1761025346615, NVIDIA GB200, 00000000:29:00.0, Disabled, 570.148.08, 1821225190819, 15, 5, 1, Switch Connected, 2, 0x983400ac35e1fa7e",
  "1, GPU-a0540bed-7ada-8445-a50e-8811bc9ef560, 1761025346615, NVIDIA GB200, 00000000:3F:00.0, Disabled, 570.148.08, 1821225190819, 15, 5, 1, Switch Connected, 1, 0x46fb28395522cf24",
]

const h100PcieRow =
  "0, GPU-0c1fde1d-2a6c-2d75-e4e5-ed9f66ddbd59, 0652823055642, NVIDIA H100 PCIe, 00000000:84:00.0, [N/A], 570.86.15, [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]"

describe("parseCsvReading without a header", () => {
  it("maps the default query columns, keeps leading zeros and leaves out what is not available", () => {
    expect(readingFrom(parseCsvReading(`${h100PcieRow}\n`))).toStrictEqual({
      gpus: [
        {
          index: 0,
          uuid: "GPU-0c1fde1d-2a6c-2d75-e4e5-ed9f66ddbd59",
          serial: "0652823055642",
          product: "NVIDIA H100 PCIe",
          pciBusId: "00000000:84:00.0",
        },
      ],
      failures: [],
      format: "csv",
      driverVersion: "570.86.15",
    })
  })

  it("reads the platform columns of an NVL tray, with CRLF and without a final newline", () => {
    const parsed = readingFrom(parseCsvReading(gb200Rows.join("\r\n")))
    expect(parsed.gpus.map((gpu) => [gpu.index, gpu.serial, gpu.moduleId, gpu.migMode])).toStrictEqual([
      [0, "1761025346615", 2, "Disabled"],
      [1, "1761025346615", 1, "Disabled"],
    ])
    expect(parsed.gpus[1]?.platform).toStrictEqual({
      chassisSerial: "1821225190819",
      slotNumber: "15",
      trayIndex: "5",
      hostId: "1",
      peerType: "Switch Connected",
      fabricGuid: "0x46fb28395522cf24",
    })
  })

  it("maps columns by the field list it is given and ignores unknown fields", () => {
    const parsed = readingFrom(
      parseCsvReading("GPU-aaaaaaaa-1111-2222-3333-444444444444, 81, P0, 2\n", {
        fields: ["uuid", "temperature.gpu", "pstate", "index"],
      }),
    )
    expect(parsed.gpus).toStrictEqual([{ index: 2, uuid: "GPU-aaaaaaaa-1111-2222-3333-444444444444" }])
  })

  it("turns a row with [GPU requires reset] into a failure and keeps the other GPUs", () => {
    const resetRow = `1, ${Array(13).fill("[GPU requires reset]").join(", ")}`
    const parsed = readingFrom(parseCsvReading(`${gb200Rows[0]}\n${resetRow}\n`))
    expect(parsed.gpus.map((gpu) => gpu.index)).toStrictEqual([0])
    expect(parsed.failures).toStrictEqual([{ kind: "requires-reset", index: 1, reason: "GPU requires reset" }])
  })

  it("fails with a malformed error on a row with the wrong number of cells", () => {
    const error = errorFrom(parseCsvReading(`${gb200Rows[0]}\n0, GPU-aaaaaaaa-1111-2222-3333-444444444444\n`))
    expect(error.kind).toBe("malformed")
    expect(error.message).toContain("CSV row 2 has 2 cells where 14 were expected")
  })

  it("records device-handle lines printed before the rows", () => {
    const parsed = readingFrom(
      parseCsvReading(`Unable to determine the device handle for GPU1: 0000:34:00.0: Unknown Error\n${gb200Rows[0]}\n`),
    )
    expect(parsed.failures).toStrictEqual([
      { kind: "device-handle", index: 1, pciBusId: "0000:34:00.0", reason: "Unknown Error" },
    ])
  })
})

describe("parseCsvReading with a header", () => {
  it("maps columns by name, with aliases, units and quoted cells", () => {
    const text = [
      "gpu_uuid, gpu_name, kmd_version, driver_version, count, fan.speed [%], gpu_serial, gpu_bus_id",
      'GPU-aaaaaaaa-1111-2222-3333-444444444444, "Vendor, Inc. ""Model"" GPU", 615.23.01, 615.23, 2, 30 %, 0123, 00000000:01:00.0',
    ].join("\n")
    expect(readingFrom(parseCsvReading(text))).toStrictEqual({
      gpus: [
        {
          index: 0,
          uuid: "GPU-aaaaaaaa-1111-2222-3333-444444444444",
          serial: "0123",
          product: 'Vendor, Inc. "Model" GPU',
          pciBusId: "00000000:01:00.0",
        },
      ],
      failures: [],
      format: "csv",
      driverVersion: "615.23.01",
      attachedGpus: 2,
    })
  })

  it("fails with no-devices on a header without rows and with empty on nothing", () => {
    expect(errorFrom(parseCsvReading("name, uuid\n")).kind).toBe("no-devices")
    expect(errorFrom(parseCsvReading("\n\n")).kind).toBe("empty")
  })

  it("fails with truncated when the output ends inside its header line", () => {
    for (const cut of [
      "index, uuid, ser",
      "index, uuid",
      "index, u",
      "ind",
      "Unable to determine the device handle for GPU1: 0000:34:00.0: Unknown Error\nindex, uu",
    ]) {
      const error = errorFrom(parseCsvReading(cut))
      expect([cut, error.kind]).toStrictEqual([cut, "truncated"])
      expect(error.message).toContain("ends inside its header line")
    }
    expect(errorFrom(parseCsvReading("index, uuid\n")).kind).toBe("no-devices")
  })

  it("fails with truncated when the output ends inside a row, and with malformed on a short row that ends", () => {
    const full = `${gb200Rows[0]}\n${gb200Rows[1]}\n`
    for (const length of [full.indexOf("\n") + 5, full.length - 30, full.length - 60]) {
      const cut = full.slice(0, length)
      const error = errorFrom(parseCsvReading(cut))
      expect([length, error.kind]).toStrictEqual([length, "truncated"])
      expect(error.message).toContain("ends inside row")
    }
    expect(errorFrom(parseCsvReading(`${gb200Rows[0]}\n0, GPU-aaaaaaaa-1111-2222-3333-444444444444\n`)).kind).toBe(
      "malformed",
    )
  })

  it("calls an exec's output cut inside the last value of a row truncated, where a capture file may lack its newline", () => {
    const full = `${gb200Rows[0]}\n${gb200Rows[1]}\n`
    // Cut inside the last cell of the second row: every cell is there, the value is not whole.
    const cut = full.slice(0, full.length - 6)
    const error = errorFrom(parseCsvReading(cut, { wholeOutput: true }))
    expect(error.kind).toBe("truncated")
    expect(error.message).toContain("ends inside row 2")
    expect(readingFrom(parseCsvReading(full, { wholeOutput: true })).gpus).toHaveLength(2)
    expect(readingFrom(parseCsvReading(full.slice(0, -1))).gpus).toHaveLength(2)
  })

  it("keeps the first of two GPUs with one UUID and reports the second as a duplicate-uuid failure", () => {
    const uuid = "GPU-aaaaaaaa-1111-2222-3333-444444444444"
    const parsed = readingFrom(
      parseCsvReading(
        `index, uuid, pci.bus_id\n0, ${uuid}, 00000000:01:00.0\n1, ${uuid.toUpperCase()}, 00000000:02:00.0\n`,
      ),
    )
    expect(parsed.gpus.map((gpu) => [gpu.index, gpu.pciBusId])).toStrictEqual([[0, "00000000:01:00.0"]])
    expect(parsed.failures).toStrictEqual([
      {
        kind: "duplicate-uuid",
        index: 1,
        pciBusId: "00000000:02:00.0",
        reason: `UUID ${uuid.toUpperCase()} is also reported by GPU 0`,
      },
    ])
  })
})

describeWithFixtures("--query-gpu CSV fixtures", () => {
  it("reads tesla-p100-query-gpu-uuid-netdata.csv: header with units, a uuid and no serial column", () => {
    const expected = {
      gpus: [{ index: 0, uuid: "GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6", product: "Tesla P100-PCIE-16GB" }],
      failures: [],
      format: "csv",
    }
    expect(readingFrom(parseCsvReading(readFixtureText("tesla-p100-query-gpu-uuid-netdata.csv")))).toStrictEqual(
      expected,
    )
    expect(readingFrom(parseNvsmiOutput(readFixture("tesla-p100-query-gpu-uuid-netdata.csv")))).toStrictEqual(expected)
  })

  it("calls an output cut at any point of a fixture's header line truncated, never another kind", () => {
    const headerLines = [
      { fixture: "tesla-p100-query-gpu-uuid-netdata.csv", header: 0 },
      // The composite capture's first --query-gpu block, after the text of its other commands.
      { fixture: "capture-h100-mig-linux-driver590-q-text-and-query-gpu-csv.txt", header: 1832 },
    ]
    for (const { fixture, header } of headerLines) {
      const text = readFixtureText(fixture)
      let start = 0
      for (let line = 0; line < header; line++) start = text.indexOf("\n", start) + 1
      const end = text.indexOf("\n", start)
      expect(end, fixture).toBeGreaterThan(start)
      const misread: Array<string> = []
      for (let cut = start + 1; cut <= end; cut++) {
        const outcome = parseCsvReading(text.slice(0, cut))
        const kind = Result.isFailure(outcome) ? outcome.failure.kind : "a reading"
        if (kind !== "truncated")
          misread.push(`cut after ${JSON.stringify(text.slice(start, cut).slice(-16))}: ${kind}`)
      }
      expect(misread, fixture).toEqual([])
    }
  })

  it("reads error-gpu-requires-reset-query-gpu-noheader.csv (index,compute_mode,pstate) as gpu-requires-reset", () => {
    const text = readFixtureText("error-gpu-requires-reset-query-gpu-noheader.csv")
    const error = errorFrom(parseCsvReading(text, { fields: ["index", "compute_mode", "pstate"] }))
    expect(error._tag).toBe("GpuRequiresReset")
    expect(error._tag === "GpuRequiresReset" && error.gpuCount).toBe(2)
    expect(errorFrom(parseCsvReading(text)).kind).toBe("gpu-requires-reset")
  })

  it("reads the first --query-gpu block (with header) of the composite H100 MIG capture", () => {
    const expected = {
      gpus: [
        {
          index: 0,
          uuid: "GPU-00000000-0000-0000-0000-000000000000",
          serial: "0000000000000",
          product: "NVIDIA H100 80GB HBM3",
          pciBusId: "00000000:00:09.0",
          moduleId: 7,
          migMode: "Enabled",
          platform: {
            slotNumber: "0",
            trayIndex: "0",
            hostId: "1",
            peerType: "Direct Connected",
            fabricGuid: "0x0000000000000000",
          },
          // The capture's health columns, cell by cell (remapped rows are [N/A] with MIG enabled).
          health: {
            ecc: {
              enabled: true,
              volatileUncorrectable: 0,
              aggregateUncorrectable: 0,
              volatileCorrectable: 0,
              aggregateCorrectable: 0,
            },
            recoveryAction: "none",
            pcie: { linkGen: { current: 5, max: 5 }, linkWidth: { current: 16, max: 16 } },
            clockEvents: [],
            fabric: {
              state: "completed",
              status: "success",
              cliqueId: "0",
              clusterUuid: "00000000-0000-0000-0000-000000000000",
            },
            vbios: "96.00.A5.00.01",
          },
        },
      ],
      failures: [],
      format: "csv",
      driverVersion: "590.48.01",
      attachedGpus: 1,
    }
    const file = "capture-h100-mig-linux-driver590-q-text-and-query-gpu-csv.txt"
    expect(readingFrom(parseCsvReading(readFixtureText(file)))).toStrictEqual(expected)
    expect(readingFrom(parseNvsmiOutput(readFixture(file)))).toStrictEqual(expected)
  })
})
