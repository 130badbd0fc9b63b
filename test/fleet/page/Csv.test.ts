import { describe, expect, it } from "vitest"
import type { Gpu } from "../../../src/fleet/page/ApiTypes.ts"
import { csvField, csvFileName, csvOf } from "../../../src/fleet/page/Csv.ts"

const gpu: Gpu = {
  uuid: "GPU-5fe8a0c4",
  gpu: "1652423012345",
  node: "gpu-node-1",
  machine: "i-0abc",
  chassis: "1821424000017",
  product: "NVIDIA GB200",
  pciBusId: "00000008:01:00.0",
  moduleId: 2,
  index: 1,
  health: { state: "degraded", reasons: ["row-remap-pending"], rmaEligible: false },
  lastSeen: "2026-12-02T05:00:00Z",
  since: "2026-12-01T00:00:00Z",
}

/** Splits CSV text as RFC 4180 reads it: quoted fields may hold commas, quotes and line breaks. */
const parse = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (char === '"') quoted = false
      else field += char
    } else if (char === '"') quoted = true
    else if (char === ",") {
      row.push(field)
      field = ""
    } else if (char === "\r" && text[i + 1] === "\n") {
      row.push(field)
      rows.push(row)
      row = []
      field = ""
      i++
    } else field += char
  }
  return rows
}

describe("the CSV download", () => {
  it("has a header line and one line per GPU, in the results table's order", () => {
    const rows = parse(csvOf([gpu, { ...gpu, uuid: "GPU-2", gpu: "", chassis: "" }]))
    expect(rows).toEqual([
      [
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
      ],
      [
        "1652423012345",
        "GPU-5fe8a0c4",
        "gpu-node-1",
        "i-0abc",
        "1821424000017",
        "NVIDIA GB200",
        "1",
        "00000008:01:00.0",
        "2",
        "degraded",
        "2026-12-02T05:00:00Z",
        "2026-12-01T00:00:00Z",
      ],
      [
        "",
        "GPU-2",
        "gpu-node-1",
        "i-0abc",
        "",
        "NVIDIA GB200",
        "1",
        "00000008:01:00.0",
        "2",
        "degraded",
        "2026-12-02T05:00:00Z",
        "2026-12-01T00:00:00Z",
      ],
    ])
  })

  it("writes an absent health as unknown and absent optional fields as empty", () => {
    const { health: _health, product: _product, pciBusId: _pci, moduleId: _module, ...bare } = gpu
    const [, row] = parse(csvOf([bare]))
    expect(row?.slice(5, 10)).toEqual(["", "1", "", "", "unknown"])
  })

  it("keeps commas, quotes and line breaks inside one field", () => {
    const tricky = 'node "a",\nb'
    expect(parse(csvOf([{ ...gpu, node: tricky }]))[1]?.[2]).toBe(tricky)
  })

  it("never lets a spreadsheet read a reported value as a formula", () => {
    expect(csvField('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"')
    expect(csvField("+1")).toBe("'+1")
    expect(csvField("-1")).toBe("'-1")
    expect(csvField("@sum")).toBe("'@sum")
    expect(csvField("GPU-1")).toBe("GPU-1")
  })

  it("names the file after the search, safely", () => {
    expect(csvFileName("q 1652, health failed")).toBe("gpus-q-1652-health-failed.csv")
    expect(csvFileName("")).toBe("gpus.csv")
    expect(csvFileName("../../etc/passwd")).toBe("gpus-..-..-etc-passwd.csv")
  })
})
