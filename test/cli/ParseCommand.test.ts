import { readdirSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { describeWithFixtures, fixtureDirectory, fixturesPresent, readFixture } from "../support/fixtures.ts"
import { gpuSerials, jsonLines } from "./GpuSerialsCli.ts"

const fixture = (name: string): string => join(fixtureDirectory, name)

describeWithFixtures("gpu-serials parse on the real captures", () => {
  const h100 = "h100-80gb-hbm3-x8-driver570-v12-real-serials-gpuid.xml"

  it.each(["512Ki", "1Mi", "300000"])("takes --max-bytes %s, written as NVIDIA_SMI_MAX_OUTPUT is", (size) => {
    const run = gpuSerials(["parse", "-", "--max-bytes", size], { input: readFixture(h100) })
    expect(run.status).toBe(0)
    expect(jsonLines(run.stdout)).toHaveLength(8)
  })

  it("refuses the 200 KB capture under --max-bytes 8Ki", () => {
    expect(readFixture(h100).length).toBeGreaterThan(8 * 1024)
    const run = gpuSerials(["parse", "-", "--max-bytes", "8Ki"], { input: readFixture(h100) })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("output-too-large")
  })

  it("prints the GB200 tray as 4 GPUs with 4 UUIDs, 2 shared serials and the chassis serial", () => {
    const run = gpuSerials(["parse", fixture("gb200-x4-driver570-v12-real-serials-crlf-gpuid.xml")])
    expect(run.status).toBe(0)
    const records = jsonLines(run.stdout)
    expect(records).toHaveLength(4)
    expect(new Set(records.map((record) => record.uuid)).size).toBe(4)
    expect(new Set(records.map((record) => record.gpu))).toEqual(new Set(["1761025346615", "1761125340953"]))
    expect(records.every((record) => record.chassis === "1821225190819" && record.serialShared === true)).toBe(true)
    expect(run.stderr).toBe("")
  })

  const xmlFixtures = fixturesPresent ? readdirSync(fixtureDirectory).filter((name) => name.endsWith(".xml")) : []
  it.each(xmlFixtures)("prints one record per <gpu> of %s", (name) => {
    const gpuElements =
      readFixture(name)
        .toString("utf8")
        .match(/<gpu[\s>]/g)?.length ?? 0
    const run = gpuSerials(["parse", fixture(name), "--cluster", "lab", "--node", "node-1"])
    expect(run.status).toBe(0)
    const records = jsonLines(run.stdout)
    expect(records).toHaveLength(gpuElements)
    expect(records.every((record) => record.cluster === "lab" && record.node === "node-1")).toBe(true)
    expect(records.map((record) => record.index)).toEqual(records.map((_, index) => index))
  })

  it.each([
    ["error-driver-not-loaded.txt", "driver-not-loaded"],
    ["error-no-devices-found.txt", "no-devices"],
    ["error-nvml-driver-library-version-mismatch.txt", "nvml-version-mismatch"],
    ["error-device-handle-unknown-error-partial-table-driver610.txt", "device-handle"],
    ["error-gpu-requires-reset-query-gpu-noheader.csv", "gpu-requires-reset"],
  ])("reports %s as the typed error %s and exits 1", (name, kind) => {
    const run = gpuSerials(["parse", fixture(name)])
    expect(run.status).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr).toContain(`gpu-serials parse: ${kind}: `)
    expect(run.stderr.split("\n").every((line) => line.length <= 200)).toBe(true)
  })

  it("reads a capture from standard input and prints an aligned table", () => {
    const run = gpuSerials(["parse", "-", "--format", "table"], {
      input: readFixture("tesla-k80-x4-azure-driver430-v10-cuda-not-found-pai.xml"),
    })
    expect(run.status).toBe(0)
    const [header, ...rows] = run.stdout.trimEnd().split("\n")
    expect(header).toMatch(/^INDEX\s+UUID\s+SERIAL\s+PRODUCT\s+PCI BUS ID\s+MODULE\s+MIG\s+CHASSIS$/)
    expect(rows).toHaveLength(4)
    expect(rows.every((row) => row.includes("*"))).toBe(true)
    expect(rows.map((row) => row.indexOf("Tesla K80"))).toEqual(rows.map(() => header?.indexOf("PRODUCT")))
  })

  it("reads --query-gpu CSV with a header", () => {
    const run = gpuSerials(["parse", fixture("tesla-p100-query-gpu-uuid-netdata.csv")])
    expect(run.status).toBe(0)
    expect(jsonLines(run.stdout)).toMatchObject([
      { uuid: "GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6", product: "Tesla P100-PCIE-16GB", gpu: "" },
    ])
  })
})

describe("gpu-serials parse on bad input", () => {
  it("refuses a capture over --max-bytes with a typed error, without echoing it", () => {
    const run = gpuSerials(["parse", "-", "--max-bytes", "1Ki"], { input: `<nvidia_smi_log>${"x".repeat(2000)}` })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("output-too-large")
    expect(run.stderr).not.toContain("x".repeat(100))
  })

  it.each([
    ["8MB", '--max-bytes must be a byte size: invalid byte size "8MB" (use bytes or a suffix: 512Ki, 8Mi, 1Gi)'],
    ["100", "--max-bytes must be between 1Ki and 64Mi, got 100"],
    ["1Gi", "--max-bytes must be between 1Ki and 64Mi, got 1Gi"],
  ])("refuses --max-bytes %s with its reason and exit 2", (size, message) => {
    const run = gpuSerials(["parse", "-", "--max-bytes", size], { input: "" })
    expect(run.status).toBe(2)
    expect(run.stderr).toContain(message)
  })

  it("turns garbage into a typed error, not a crash", () => {
    const run = gpuSerials(["parse", "-"], { input: Buffer.from([0xff, 0x00, 0x13, 0x37, 0x80, 0x0a]) })
    expect(run.status).toBe(1)
    expect(run.stderr).toMatch(/^gpu-serials parse: [a-z-]+: /)
  })

  it("says a missing file cannot be read and exits 1", () => {
    const run = gpuSerials(["parse", "/nonexistent/capture.xml"])
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("cannot read /nonexistent/capture.xml")
  })

  it("rejects an unknown format and unknown options with exit code 2", () => {
    const run = gpuSerials(["parse", "-", "--format", "yaml", "--colour"])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("--format must be json or table, not yaml")
    expect(run.stderr).toContain("unknown option --colour")
  })
})
