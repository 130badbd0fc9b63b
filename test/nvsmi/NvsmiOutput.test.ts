import { readdirSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { parseNvsmiOutput } from "../../src/nvsmi/NvsmiOutput.ts"
import { describeWithFixtures, fixtureDirectory, readFixture } from "../support/fixtures.ts"
import { errorFrom, readingFrom } from "./ReadingAssertions.ts"

const errorFixtures: ReadonlyArray<readonly [string, string]> = [
  ["error-driver-not-loaded.txt", "driver-not-loaded"],
  ["error-no-devices-found.txt", "no-devices"],
  ["error-nvml-driver-library-version-mismatch.txt", "nvml-version-mismatch"],
  ["error-device-handle-unknown-error-partial-table-driver610.txt", "device-handle"],
  ["error-gpu-requires-reset-query-gpu-noheader.csv", "gpu-requires-reset"],
]

/** Files asserted value by value in XmlFixtures.test.ts and CsvReadingParser.test.ts. */
const readingFixtures = [
  "a100-sxm4-40gb-mig-driver510-v11-netdata.xml",
  "a100-sxm4-80gb-mig-driver535-v12-telegraf.xml",
  "capture-h100-mig-linux-driver590-q-text-and-query-gpu-csv.txt",
  "gb200-x4-driver570-v12-real-serials-crlf-gpuid.xml",
  "geforce-gt730-driver384-v9-minimal-pai.xml",
  "gt1030-driver470-v11-serial-na-telegraf.xml",
  "gtx1660ti-driver418-no-doctype-telegraf.xml",
  "h100-80gb-hbm3-x8-driver570-v12-real-serials-gpuid.xml",
  "l40s-x1-driver595-aws-g6e.xml",
  "rtx-a5000-x2-driver590-v13-telegraf.xml",
  "rtx4090-driver535-v12-serial-na-netdata.xml",
  "tesla-k80-x4-azure-driver430-v10-cuda-not-found-pai.xml",
  "tesla-p100-query-gpu-uuid-netdata.csv",
  "tesla-t4-x1-driver595-aws-g4dn.xml",
]

describeWithFixtures("parseNvsmiOutput on the corpus", () => {
  it.each(errorFixtures)("reads %s as the %s error", (file, kind) => {
    expect(errorFrom(parseNvsmiOutput(readFixture(file))).kind).toBe(kind)
  })

  it("reads the partial table as the device-handle error naming the failed GPU and the 3 GPUs still shown", () => {
    const error = errorFrom(
      parseNvsmiOutput(readFixture("error-device-handle-unknown-error-partial-table-driver610.txt")),
    )
    expect(error._tag === "DeviceHandleFailure" && [error.failures, error.survivingGpus]).toStrictEqual([
      [{ kind: "device-handle", index: 1, pciBusId: "0000:34:00.0", reason: "Unknown Error" }],
      3,
    ])
  })

  it("has an expectation for every file of the corpus", () => {
    const covered = [...errorFixtures.map(([file]) => file), ...readingFixtures].sort()
    const present = readdirSync(fixtureDirectory)
      .filter((file) => file !== "INDEX.md")
      .sort()
    expect(present).toStrictEqual(covered)
  })
})

describe("parseNvsmiOutput", () => {
  const document =
    '<?xml version="1.0" ?>\n<nvidia_smi_log><gpu id="00000000:01:00.0"><uuid>GPU-aaaaaaaa-1111-2222-3333-444444444444</uuid></gpu></nvidia_smi_log>\n'

  it("detects XML after a device-handle preamble and CSV without a header", () => {
    const xml = readingFrom(
      parseNvsmiOutput(`Unable to determine the device handle for GPU1: 0000:34:00.0: Unknown Error\n${document}`),
    )
    expect([xml.format, xml.gpus.length, xml.failures.length]).toStrictEqual(["xml", 1, 1])
    const csv = readingFrom(
      parseNvsmiOutput("GPU-aaaaaaaa-1111-2222-3333-444444444444, 0123\n", { fields: ["uuid", "serial"] }),
    )
    expect(csv.gpus).toStrictEqual([{ index: 0, uuid: "GPU-aaaaaaaa-1111-2222-3333-444444444444", serial: "0123" }])
  })

  it("fails with output-too-large before reading output over the cap", () => {
    expect(errorFrom(parseNvsmiOutput(document, { maxBytes: 16 })).kind).toBe("output-too-large")
    expect(errorFrom(parseNvsmiOutput(Buffer.from("x".repeat(17)), { maxBytes: 16 })).kind).toBe("output-too-large")
  })

  it("tells empty output, other nvidia-smi formats and garbage apart", () => {
    expect(errorFrom(parseNvsmiOutput(new Uint8Array())).kind).toBe("empty")
    expect(errorFrom(parseNvsmiOutput("\n==============NVSMI LOG==============\n\nTimestamp : x\n")).kind).toBe(
      "not-nvidia-smi",
    )
    expect(errorFrom(parseNvsmiOutput(Buffer.from([0xff, 0xfe, 0x00, 0x41]))).kind).toBe("not-nvidia-smi")
    expect(errorFrom(parseNvsmiOutput("Failed to initialize NVML: Insufficient Permissions")).kind).toBe(
      "nvml-init-failed",
    )
  })
})
