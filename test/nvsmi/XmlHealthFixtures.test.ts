import { readdirSync } from "node:fs"
import { expect, it } from "vitest"
import type { GpuHealthSignals } from "../../src/domain/GpuHealth.ts"
import { parseXmlReading, XmlReadingParser } from "../../src/nvsmi/XmlReadingParser.ts"
import {
  describeWithFixtures,
  fixtureDirectory,
  fixturesPresent,
  readFixture,
  readFixtureText,
} from "../support/fixtures.ts"
import { readingFrom } from "./ReadingAssertions.ts"

/*
 * An independent read of the health elements: the text of each `<gpu>` is cut with regular expressions,
 * element by element down a path, and the values are turned into signals by the rules written out here,
 * not by the parser's tables.
 */

const gpuBlocks = (xml: string): Array<string> =>
  Array.from(xml.matchAll(/<gpu id="[^"]*">([\s\S]*?)\n\s*<\/gpu>/g), (m) => m[1] ?? "")

/** The content of the first element at `path` (slash-separated) inside `block`, trimmed; undefined when absent. */
const at = (block: string, path: string): string | undefined => {
  let scope: string | undefined = block
  for (const name of path.split("/")) {
    if (scope === undefined) return undefined
    const match: RegExpExecArray | null = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(scope)
    scope = match?.[1]
  }
  return scope?.trim()
}

const unavailable =
  /^(N\/A|Not Found|None|Not Available|Not Supported|Unknown Error|Requested functionality has been deprecated|Insufficient Permissions|\[.*\])?$/i

const text = (block: string, path: string): string | undefined => {
  const value = at(block, path)
  return value === undefined || unavailable.test(value) || value.includes("<") ? undefined : value
}

const number = (block: string, path: string): number | undefined => {
  const value = text(block, path)
  return value !== undefined && /^\d+x?$/.test(value) ? Number.parseInt(value, 10) : undefined
}

const yes = (block: string, path: string): boolean | undefined => {
  const value = text(block, path)
  return value === "Yes" ? true : value === "No" ? false : undefined
}

const dashed = (value: string | undefined): string | undefined =>
  value === undefined ? undefined : value.toLowerCase().split(" ").join("-")

const sum = (values: ReadonlyArray<number | undefined>): number | undefined =>
  values.some((value) => value !== undefined)
    ? values.reduce<number>((total, value) => total + (value ?? 0), 0)
    : undefined

/** Drops absent keys and empty objects, as a record does. */
const compact = <T extends object>(value: T): T | undefined => {
  const entries = Object.entries(value).filter(([, field]) => field !== undefined)
  return entries.length === 0 ? undefined : (Object.fromEntries(entries) as T)
}

const eccTotal = (block: string, scope: string, kind: "correctable" | "uncorrectable"): number | undefined => {
  const whole = number(block, `ecc_errors/${scope}/${kind === "correctable" ? "single_bit" : "double_bit"}/total`)
  if (whole !== undefined) return whole
  const parts =
    kind === "correctable"
      ? ["sram_correctable", "dram_correctable"]
      : ["sram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded", "dram_uncorrectable"]
  return sum(parts.map((part) => number(block, `ecc_errors/${scope}/${part}`)))
}

const recoveryAction = (block: string): string | undefined => {
  if (at(block, "gpu_recovery_action") === "None") return "none"
  const action = text(block, "gpu_recovery_action")
  if (action !== undefined) return dashed(action)
  const reset = yes(block, "gpu_reset_status/reset_required")
  const drain = yes(block, "gpu_reset_status/drain_and_reset_recommended")
  return drain === true ? "drain-and-reset" : reset === true ? "reset" : reset === false ? "none" : undefined
}

const clockEvents = (block: string): Array<string> | undefined => {
  const reasons = at(block, "clocks_event_reasons") === undefined ? "clocks_throttle_reasons" : "clocks_event_reasons"
  const prefix = reasons === "clocks_event_reasons" ? "clocks_event_reason" : "clocks_throttle_reason"
  const names = ["hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown"]
  const states = names.map((name) => [name, text(block, `${reasons}/${prefix}_${name}`)] as const)
  if (states.every(([, state]) => state === undefined)) return undefined
  return states.filter(([, state]) => state === "Active").map(([name]) => name.split("_").join("-"))
}

const independentHealth = (block: string): GpuHealthSignals | undefined =>
  compact({
    retiredPages: compact({
      singleBit: number(block, "retired_pages/multiple_single_bit_retirement/retired_count"),
      doubleBit: number(block, "retired_pages/double_bit_retirement/retired_count"),
      pending: yes(block, "retired_pages/pending_retirement") ?? yes(block, "retired_pages/pending_blacklist"),
    }),
    remappedRows: compact({
      correctable: number(block, "remapped_rows/remapped_row_corr"),
      uncorrectable: number(block, "remapped_rows/remapped_row_unc"),
      pending: yes(block, "remapped_rows/remapped_row_pending"),
      failure: yes(block, "remapped_rows/remapped_row_failure"),
    }),
    ecc: compact({
      enabled: { Enabled: true, Disabled: false }[text(block, "ecc_mode/current_ecc") ?? ""],
      volatileUncorrectable: eccTotal(block, "volatile", "uncorrectable"),
      aggregateUncorrectable: eccTotal(block, "aggregate", "uncorrectable"),
      volatileCorrectable: eccTotal(block, "volatile", "correctable"),
      aggregateCorrectable: eccTotal(block, "aggregate", "correctable"),
    }),
    recoveryAction: recoveryAction(block),
    pcie: compact({
      linkGen: compact({
        current: number(block, "pci/pci_gpu_link_info/pcie_gen/current_link_gen"),
        max: number(block, "pci/pci_gpu_link_info/pcie_gen/max_link_gen"),
      }),
      linkWidth: compact({
        current: number(block, "pci/pci_gpu_link_info/link_widths/current_link_width"),
        max: number(block, "pci/pci_gpu_link_info/link_widths/max_link_width"),
      }),
      replays: number(block, "pci/replay_counter"),
    }),
    clockEvents: clockEvents(block),
    fabric: compact({
      state: dashed(text(block, "fabric/state")),
      status: dashed(text(block, "fabric/status")),
      cliqueId: text(block, "fabric/cliqueId"),
      clusterUuid: text(block, "fabric/clusterUuid"),
      summary: dashed(text(block, "fabric/health/summary")),
    }),
    vbios: text(block, "vbios_version"),
  } as GpuHealthSignals)

const xmlCaptures = fixturesPresent
  ? readdirSync(fixtureDirectory)
      .filter((name) => name.endsWith(".xml"))
      .sort()
  : []

describeWithFixtures("health signals of every nvidia-smi -q -x capture", () => {
  it.each(xmlCaptures)("%s: each GPU's health equals an independent read of its XML", (file) => {
    const blocks = gpuBlocks(readFixtureText(file))
    const reading = readingFrom(parseXmlReading(readFixture(file)))
    expect(reading.gpus).toHaveLength(blocks.length)
    reading.gpus.forEach((gpu, position) => {
      expect(gpu.health).toStrictEqual(independentHealth(blocks[position] ?? ""))
    })
  })

  it.each(xmlCaptures)("%s: the same health when streamed in 1 KiB chunks", (file) => {
    const bytes = readFixture(file)
    const parser = new XmlReadingParser()
    for (let offset = 0; offset < bytes.length; offset += 1024) {
      parser.write(bytes.subarray(offset, offset + 1024))
    }
    const streamed = readingFrom(parser.end()).gpus.map((gpu) => gpu.health)
    expect(streamed).toStrictEqual(readingFrom(parseXmlReading(bytes)).gpus.map((gpu) => gpu.health))
  })

  it("reads what the captures are known to print: K80 retired pages and ECC, GB200 fabric, AWS 8x links", () => {
    const k80 = readingFrom(parseXmlReading(readFixture("tesla-k80-x4-azure-driver430-v10-cuda-not-found-pai.xml")))
    expect(k80.gpus[0]?.health?.retiredPages).toStrictEqual({ singleBit: 1, doubleBit: 1, pending: false })
    expect(k80.gpus[0]?.health?.ecc).toStrictEqual({
      enabled: true,
      volatileUncorrectable: 0,
      aggregateUncorrectable: 7,
      volatileCorrectable: 0,
      aggregateCorrectable: 7,
    })
    const gb200 = readingFrom(parseXmlReading(readFixture("gb200-x4-driver570-v12-real-serials-crlf-gpuid.xml")))
    expect(gb200.gpus[0]?.health?.fabric).toStrictEqual({
      state: "completed",
      status: "success",
      cliqueId: "2",
      clusterUuid: "889d2be1-4bbf-69e1-d3f2-97c465ee31aa",
    })
    expect(gb200.gpus[0]?.health?.recoveryAction).toBe("none")
    const t4 = readingFrom(parseXmlReading(readFixture("tesla-t4-x1-driver595-aws-g4dn.xml")))
    expect(t4.gpus[0]?.health?.pcie).toStrictEqual({
      linkGen: { current: 3, max: 3 },
      linkWidth: { current: 8, max: 16 },
      replays: 0,
    })
    const gt730 = readingFrom(parseXmlReading(readFixture("geforce-gt730-driver384-v9-minimal-pai.xml")))
    expect(gt730.gpus[0]?.health).toBeUndefined()
  })
})
