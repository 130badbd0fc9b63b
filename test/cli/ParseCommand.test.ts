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
    expect(header).toMatch(/^INDEX\s+UUID\s+SERIAL\s+PRODUCT\s+PCI BUS ID\s+MODULE\s+MIG\s+CHASSIS\s+HEALTH$/)
    expect(rows).toHaveLength(4)
    expect(rows.every((row) => row.includes("*"))).toBe(true)
    expect(rows.map((row) => row.indexOf("Tesla K80"))).toEqual(rows.map(() => header?.indexOf("PRODUCT")))
  })

  it("shows each GPU's health in the table: the state, the reasons when not ok, and (RMA) for a board to return", () => {
    // The real H100 capture with the first GPU's row remap failed and the second's pending on a x8 link.
    const gpus = readFixture(h100).toString("utf8").split("<gpu id=")
    const condition = (gpu: string, remap: { pending: string; failure: string }, width = "16x") =>
      gpu
        .replace(
          "<remapped_row_pending>No</remapped_row_pending>",
          `<remapped_row_pending>${remap.pending}</remapped_row_pending>`,
        )
        .replace(
          "<remapped_row_failure>No</remapped_row_failure>",
          `<remapped_row_failure>${remap.failure}</remapped_row_failure>`,
        )
        .replace("<current_link_width>16x</current_link_width>", `<current_link_width>${width}</current_link_width>`)
    const capture = [
      gpus[0],
      condition(gpus[1] ?? "", { pending: "No", failure: "Yes" }),
      condition(gpus[2] ?? "", { pending: "Yes", failure: "No" }, "8x"),
      ...gpus.slice(3),
    ].join("<gpu id=")
    const run = gpuSerials(["parse", "-", "--format", "table"], { input: capture })
    expect(run.status).toBe(0)
    const [header = "", ...rows] = run.stdout.trimEnd().split("\n")
    const health = rows.map((row) => row.slice(header.indexOf("HEALTH")))
    expect(health).toEqual([
      "failed: row-remap-failure (RMA)",
      "degraded: row-remap-pending,pcie-width-reduced",
      ...Array.from({ length: 6 }, () => "ok"),
    ])
    // The JSON records carry the same verdict.
    const records = jsonLines(gpuSerials(["parse", "-"], { input: capture }).stdout)
    expect(records[0]).toMatchObject({ health: { state: "failed", reasons: ["row-remap-failure"], rmaEligible: true } })
  })

  it("shows - as the health of GPUs whose capture says nothing of their condition", () => {
    const run = gpuSerials(["parse", fixture("tesla-p100-query-gpu-uuid-netdata.csv"), "--format", "table"])
    expect(run.status).toBe(0)
    const [header = "", row = ""] = run.stdout.trimEnd().split("\n")
    expect(header).toMatch(/HEALTH$/)
    expect(row.slice(header.indexOf("HEALTH"))).toBe("-")
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

describe("gpu-serials parse on hostile values", () => {
  const uuid = "GPU-aaaaaaaa-1111-2222-3333-444444444444"
  const esc = "\u001b"
  const terminalControls = /[^\P{Cc}\n]|[\u2028\u2029]/u

  it("shows control characters of nvidia-smi values escaped in the table", () => {
    const csv = `index, uuid, name, serial\n0, ${uuid}, ${esc}[2J${esc}]0;owned\u0007 H100\u007f, 16${esc}[31m50\n`
    const run = gpuSerials(["parse", "-", "--format", "table", "--node", `node${esc}[1A`], { input: csv })
    expect(run.status).toBe(0)
    expect(run.stdout).not.toMatch(terminalControls)
    expect(run.stdout).toContain("\\x1b[2J\\x1b]0;owned\\x07 H100\\x7f")
    expect(run.stdout).toContain("16\\x1b[31m50")
    const [header, row] = run.stdout.trimEnd().split("\n")
    expect(row?.indexOf("\\x1b[2J")).toBe(header?.indexOf("PRODUCT"))
  })

  it("shows C1 controls and line separators of an XML capture escaped, and keeps JSON output valid JSON", () => {
    const product = "A\u009b31m B\u2028C\u0085D"
    const xml = `<nvidia_smi_log><gpu id="00000000:01:00.0"><product_name>${product}</product_name><uuid>${uuid}</uuid></gpu></nvidia_smi_log>\n`
    const table = gpuSerials(["parse", "-", "--format", "table"], { input: xml })
    expect(table.status).toBe(0)
    expect(table.stdout).not.toMatch(terminalControls)
    expect(table.stdout).toContain("A\\x9b31m B\\u2028C\\x85D")
    const json = gpuSerials(["parse", "-", "--node", `node${esc}[1A`], { input: xml })
    expect(json.status).toBe(0)
    expect(json.stdout.trimEnd().split("\n")).toHaveLength(1)
    expect(jsonLines(json.stdout)).toMatchObject([{ product, node: `node${esc}[1A` }])
  })

  it("escapes control characters of command arguments in its error lines", () => {
    const run = gpuSerials(["parse", `/nonexistent/${esc}[2Jcapture.xml`, "--format", `${esc}[31m`])
    expect(run.status).toBe(2)
    expect(run.stderr).not.toContain(esc)
    expect(run.stderr).toContain("not \\x1b[31m")
    const missing = gpuSerials(["parse", `/nonexistent/${esc}[2Jcapture.xml`])
    expect(missing.status).toBe(1)
    expect(missing.stderr).toContain("cannot read /nonexistent/\\x1b[2Jcapture.xml")
  })

  it("writes a few short lines, not megabytes, about a GPU with a multi-megabyte id", () => {
    const huge = `<nvidia_smi_log><gpu id="${"0".repeat(7 * 1024 * 1024)}"><uuid>${uuid}</uuid></gpu></nvidia_smi_log>\n`
    const refused = gpuSerials(["parse", "-"], { input: huge })
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain("malformed")
    expect(refused.stderr.length).toBeLessThanOrEqual(300)
    const longId = `<nvidia_smi_log><gpu id="${"0".repeat(1000)}"><uuid>N/A</uuid></gpu><gpu><uuid>${uuid}</uuid></gpu></nvidia_smi_log>\n`
    const partial = gpuSerials(["parse", "-"], { input: longId })
    expect(partial.status).toBe(1)
    expect(partial.stderr).toContain("unidentified")
    expect(partial.stderr.split("\n").every((line) => line.length <= 300)).toBe(true)
  })

  it("prints one record for two GPUs with one UUID, names the UUID on stderr and exits 1", () => {
    const gpu = (bus: string) => `<gpu id="${bus}"><uuid>${uuid}</uuid></gpu>`
    const xml = `<nvidia_smi_log>${gpu("00000000:01:00.0")}${gpu("00000000:02:00.0")}</nvidia_smi_log>\n`
    const run = gpuSerials(["parse", "-"], { input: xml })
    expect(run.status).toBe(1)
    const records = jsonLines(run.stdout)
    expect(records).toHaveLength(1)
    expect(records[0]).toMatchObject({ uuid, pciBusId: "00000000:01:00.0" })
    expect(run.stderr).toBe(
      `gpu-serials parse: duplicate-uuid: GPU 1 (00000000:02:00.0) could not be read: UUID ${uuid} is also reported by GPU 0\n`,
    )
  })
})
