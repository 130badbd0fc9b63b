import type {
  ClockEvent,
  CurrentAndMax,
  EccCounters,
  FabricState,
  GpuHealthSignals,
  PcieLink,
  RemappedRows,
  RetiredPages,
} from "../domain/GpuHealth.ts"
import { availableValue, detached, gpuConditionOf, printedValue } from "./NotAvailable.ts"

/**
 * The health values nvidia-smi printed for one GPU, as printed, keyed by what they mean whichever output
 * they came from (`-q -x` element or `--query-gpu` column). ECC totals come either whole (`*Correctable`,
 * `*Uncorrectable`: the `total` elements before driver 510, the CSV `.total` columns) or in SRAM and DRAM
 * parts (`*Sram*`, `*Dram*`: `ecc_errors` from 510 on), which are summed.
 */
export type ReportedHealthField =
  | "retiredSingleBit"
  | "retiredDoubleBit"
  | "retiredPending"
  | "retiredPendingBlacklist"
  | "remappedCorrectable"
  | "remappedUncorrectable"
  | "remappedPending"
  | "remappedFailure"
  | "eccMode"
  | "volatileCorrectable"
  | "volatileUncorrectable"
  | "aggregateCorrectable"
  | "aggregateUncorrectable"
  | "volatileSramCorrectable"
  | "volatileDramCorrectable"
  | "volatileSramUncorrectable"
  | "volatileSramUncorrectableParity"
  | "volatileSramUncorrectableSecded"
  | "volatileDramUncorrectable"
  | "aggregateSramCorrectable"
  | "aggregateDramCorrectable"
  | "aggregateSramUncorrectable"
  | "aggregateSramUncorrectableParity"
  | "aggregateSramUncorrectableSecded"
  | "aggregateDramUncorrectable"
  | "recoveryAction"
  | "resetRequired"
  | "drainAndResetRecommended"
  | "linkGenCurrent"
  | "linkGenMax"
  | "linkWidthCurrent"
  | "linkWidthMax"
  | "replays"
  | "hwSlowdown"
  | "hwThermalSlowdown"
  | "hwPowerBrakeSlowdown"
  | "swThermalSlowdown"
  | "fabricState"
  | "fabricStatus"
  | "fabricCliqueId"
  | "fabricClusterUuid"
  | "fabricSummary"
  | "vbios"

export type ReportedHealth = { [Field in ReportedHealthField]?: string | undefined }

/**
 * A record to fill as the output is read, every field already in place, so that every GPU's record has one
 * shape whichever values its output prints and in whatever order.
 */
export const emptyReportedHealth = (): { -readonly [Field in ReportedHealthField]: string | undefined } => ({
  retiredSingleBit: undefined,
  retiredDoubleBit: undefined,
  retiredPending: undefined,
  retiredPendingBlacklist: undefined,
  remappedCorrectable: undefined,
  remappedUncorrectable: undefined,
  remappedPending: undefined,
  remappedFailure: undefined,
  eccMode: undefined,
  volatileCorrectable: undefined,
  volatileUncorrectable: undefined,
  aggregateCorrectable: undefined,
  aggregateUncorrectable: undefined,
  volatileSramCorrectable: undefined,
  volatileDramCorrectable: undefined,
  volatileSramUncorrectable: undefined,
  volatileSramUncorrectableParity: undefined,
  volatileSramUncorrectableSecded: undefined,
  volatileDramUncorrectable: undefined,
  aggregateSramCorrectable: undefined,
  aggregateDramCorrectable: undefined,
  aggregateSramUncorrectable: undefined,
  aggregateSramUncorrectableParity: undefined,
  aggregateSramUncorrectableSecded: undefined,
  aggregateDramUncorrectable: undefined,
  recoveryAction: undefined,
  resetRequired: undefined,
  drainAndResetRecommended: undefined,
  linkGenCurrent: undefined,
  linkGenMax: undefined,
  linkWidthCurrent: undefined,
  linkWidthMax: undefined,
  replays: undefined,
  hwSlowdown: undefined,
  hwThermalSlowdown: undefined,
  hwPowerBrakeSlowdown: undefined,
  swThermalSlowdown: undefined,
  fabricState: undefined,
  fabricStatus: undefined,
  fabricCliqueId: undefined,
  fabricClusterUuid: undefined,
  fabricSummary: undefined,
  vbios: undefined,
})

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

const isBlank = (code: number): boolean => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d

/**
 * A whole number printed alone, with blanks around it at most (`0`, ` 12 `), and with `suffix` after it when
 * given (`16x`); else absent (`N/A`, `-1`, `12 bank(s)`). Read character by character: there is one per
 * value of every GPU, and digits are never one of the "not available" spellings.
 */
const wholeOf = (raw: string | undefined, suffix?: number): number | undefined => {
  if (raw === undefined) return undefined
  let start = 0
  let end = raw.length
  while (start < end && isBlank(raw.charCodeAt(start))) start++
  while (end > start && isBlank(raw.charCodeAt(end - 1))) end--
  if (suffix !== undefined && end > start && (raw.charCodeAt(end - 1) | 0x20) === suffix) end--
  if (end === start || end - start > 15) return undefined
  let value = 0
  for (let at = start; at < end; at++) {
    const digit = raw.charCodeAt(at) - 0x30
    if (digit < 0 || digit > 9) return undefined
    value = value * 10 + digit
  }
  return value
}

const countOf = (raw: string | undefined): number | undefined => wholeOf(raw)

/** `16x` (XML) or `16` (CSV). */
const linkWidthOf = (raw: string | undefined): number | undefined => wholeOf(raw, 0x78)

/** `yes` and `no` as nvidia-smi prints them, in any case; anything else, not available included, is absent. */
const flagOf = (raw: string | undefined, yes: string, no: string): boolean | undefined => {
  if (raw === undefined) return undefined
  if (raw === yes) return true
  if (raw === no) return false
  if (raw.length > 40) return undefined
  const value = raw.trim().toLowerCase()
  return value === yes.toLowerCase() ? true : value === no.toLowerCase() ? false : undefined
}

const yesNoOf = (raw: string | undefined): boolean | undefined => flagOf(raw, "Yes", "No")

/** The names nvidia-smi prints most, as their constant lower-case dashed spelling. */
const dashedSpellings: ReadonlyMap<string, string> = new Map(
  [
    "Completed",
    "In Progress",
    "Not Started",
    "Success",
    "Healthy",
    "Unhealthy",
    "Degraded Bandwidth",
    "Limited Capacity",
    "Reset",
    "Reboot",
    "Drain P2P",
    "Drain and Reset",
  ].map((printed) => [printed, printed.toLowerCase().replaceAll(" ", "-")]),
)

/** `Completed` → `completed`, `In Progress` → `in-progress`, `Limited Capacity` → `limited-capacity`. */
const dashedOf = (raw: string | undefined): string | undefined => {
  const value = printedValue(raw)
  if (value === undefined) return undefined
  const known = dashedSpellings.get(value)
  if (known !== undefined) return known
  const dashed = value
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
  return dashed === "" ? undefined : detached(dashed)
}

const recoveryActionAliases: ReadonlyMap<string, string> = new Map([
  ["gpu-reset", "reset"],
  ["node-reboot", "reboot"],
  ["reboot-node", "reboot"],
])

/**
 * `gpu_recovery_action` (570+) when it says something, else what `gpu_reset_status` said before it; a
 * bracketed `[GPU requires reset]` in either is the `reset` it asks for.
 */
const recoveryActionOf = (reported: ReportedHealth): string | undefined => {
  if (
    gpuConditionOf(reported.recoveryAction) === "requires-reset" ||
    gpuConditionOf(reported.resetRequired) === "requires-reset"
  ) {
    return "reset"
  }
  // `None` is the action itself here, not one of the "not available" spellings.
  const action = reported.recoveryAction?.trim().toLowerCase() === "none" ? "none" : dashedOf(reported.recoveryAction)
  if (action !== undefined) {
    return recoveryActionAliases.get(action) ?? action
  }
  const resetRequired = yesNoOf(reported.resetRequired)
  const drainAndReset = yesNoOf(reported.drainAndResetRecommended)
  if (drainAndReset === true) return "drain-and-reset"
  if (resetRequired === true) return "reset"
  return resetRequired === false ? "none" : undefined
}

/** The sum of the parts that were printed; absent when none was. */
const sumOf = (...raws: ReadonlyArray<string | undefined>): number | undefined => {
  let total: number | undefined
  for (const raw of raws) {
    const part = countOf(raw)
    if (part !== undefined) total = (total ?? 0) + part
  }
  return total
}

const retiredPagesOf = (reported: ReportedHealth): RetiredPages | undefined => {
  const pages: Mutable<RetiredPages> = {}
  const singleBit = countOf(reported.retiredSingleBit)
  if (singleBit !== undefined) pages.singleBit = singleBit
  const doubleBit = countOf(reported.retiredDoubleBit)
  if (doubleBit !== undefined) pages.doubleBit = doubleBit
  const pending = yesNoOf(reported.retiredPending) ?? yesNoOf(reported.retiredPendingBlacklist)
  if (pending !== undefined) pages.pending = pending
  return presentOrAbsent(pages)
}

const remappedRowsOf = (reported: ReportedHealth): RemappedRows | undefined => {
  const rows: Mutable<RemappedRows> = {}
  const correctable = countOf(reported.remappedCorrectable)
  if (correctable !== undefined) rows.correctable = correctable
  const uncorrectable = countOf(reported.remappedUncorrectable)
  if (uncorrectable !== undefined) rows.uncorrectable = uncorrectable
  const pending = yesNoOf(reported.remappedPending)
  if (pending !== undefined) rows.pending = pending
  const failure = yesNoOf(reported.remappedFailure)
  if (failure !== undefined) rows.failure = failure
  return presentOrAbsent(rows)
}

const eccOf = (reported: ReportedHealth): EccCounters | undefined => {
  const ecc: Mutable<EccCounters> = {}
  const enabled = flagOf(reported.eccMode, "Enabled", "Disabled")
  if (enabled !== undefined) ecc.enabled = enabled
  const volatileUncorrectable =
    countOf(reported.volatileUncorrectable) ??
    sumOf(
      reported.volatileSramUncorrectable,
      reported.volatileSramUncorrectableParity,
      reported.volatileSramUncorrectableSecded,
      reported.volatileDramUncorrectable,
    )
  if (volatileUncorrectable !== undefined) ecc.volatileUncorrectable = volatileUncorrectable
  const aggregateUncorrectable =
    countOf(reported.aggregateUncorrectable) ??
    sumOf(
      reported.aggregateSramUncorrectable,
      reported.aggregateSramUncorrectableParity,
      reported.aggregateSramUncorrectableSecded,
      reported.aggregateDramUncorrectable,
    )
  if (aggregateUncorrectable !== undefined) ecc.aggregateUncorrectable = aggregateUncorrectable
  const volatileCorrectable =
    countOf(reported.volatileCorrectable) ?? sumOf(reported.volatileSramCorrectable, reported.volatileDramCorrectable)
  if (volatileCorrectable !== undefined) ecc.volatileCorrectable = volatileCorrectable
  const aggregateCorrectable =
    countOf(reported.aggregateCorrectable) ??
    sumOf(reported.aggregateSramCorrectable, reported.aggregateDramCorrectable)
  if (aggregateCorrectable !== undefined) ecc.aggregateCorrectable = aggregateCorrectable
  return presentOrAbsent(ecc)
}

const currentAndMaxOf = (current: number | undefined, max: number | undefined): CurrentAndMax | undefined => {
  const pair: Mutable<CurrentAndMax> = {}
  if (current !== undefined) pair.current = current
  if (max !== undefined) pair.max = max
  return presentOrAbsent(pair)
}

const pcieOf = (reported: ReportedHealth): PcieLink | undefined => {
  const link: Mutable<PcieLink> = {}
  const linkGen = currentAndMaxOf(countOf(reported.linkGenCurrent), countOf(reported.linkGenMax))
  if (linkGen !== undefined) link.linkGen = linkGen
  const width = currentAndMaxOf(linkWidthOf(reported.linkWidthCurrent), linkWidthOf(reported.linkWidthMax))
  if (width !== undefined) link.linkWidth = width
  const replays = countOf(reported.replays)
  if (replays !== undefined) link.replays = replays
  return presentOrAbsent(link)
}

const clockEventFields: ReadonlyArray<readonly [ReportedHealthField, ClockEvent]> = [
  ["hwSlowdown", "hw-slowdown"],
  ["hwThermalSlowdown", "hw-thermal-slowdown"],
  ["hwPowerBrakeSlowdown", "hw-power-brake-slowdown"],
  ["swThermalSlowdown", "sw-thermal-slowdown"],
]

/** The active ones among the reasons printed; absent when none of them was printed at all. */
const clockEventsOf = (reported: ReportedHealth): ReadonlyArray<ClockEvent> | undefined => {
  let events: Array<ClockEvent> | undefined
  for (const [field, event] of clockEventFields) {
    const active = flagOf(reported[field], "Active", "Not Active")
    if (active !== undefined) {
      events ??= []
      if (active) events.push(event)
    }
  }
  return events
}

const fabricOf = (reported: ReportedHealth): FabricState | undefined => {
  const fabric: Mutable<FabricState> = {}
  const state = dashedOf(reported.fabricState)
  if (state !== undefined) fabric.state = state
  const status = dashedOf(reported.fabricStatus)
  if (status !== undefined) fabric.status = status
  const cliqueId = availableValue(reported.fabricCliqueId)
  if (cliqueId !== undefined) fabric.cliqueId = cliqueId
  const clusterUuid = availableValue(reported.fabricClusterUuid)
  if (clusterUuid !== undefined) fabric.clusterUuid = clusterUuid
  const summary = dashedOf(reported.fabricSummary)
  if (summary !== undefined) fabric.summary = summary
  return presentOrAbsent(fabric)
}

const presentOrAbsent = <T extends object>(value: T): T | undefined => {
  for (const _ in value) return value
  return undefined
}

/**
 * The health signals of one GPU from what nvidia-smi printed: counts as numbers, flags as booleans, names
 * lower-case with dashes; a value printed as not available is absent, a group with nothing in it is absent,
 * and so is the whole when nothing was printed.
 */
export const healthSignalsOf = (reported: ReportedHealth | undefined): GpuHealthSignals | undefined => {
  if (reported === undefined) return undefined
  const health: Mutable<GpuHealthSignals> = {}
  const retiredPages = retiredPagesOf(reported)
  if (retiredPages !== undefined) health.retiredPages = retiredPages
  const remappedRows = remappedRowsOf(reported)
  if (remappedRows !== undefined) health.remappedRows = remappedRows
  const ecc = eccOf(reported)
  if (ecc !== undefined) health.ecc = ecc
  const recoveryAction = recoveryActionOf(reported)
  if (recoveryAction !== undefined) health.recoveryAction = recoveryAction
  const pcie = pcieOf(reported)
  if (pcie !== undefined) health.pcie = pcie
  const clockEvents = clockEventsOf(reported)
  if (clockEvents !== undefined) health.clockEvents = clockEvents
  const fabric = fabricOf(reported)
  if (fabric !== undefined) health.fabric = fabric
  const vbios = availableValue(reported.vbios)
  if (vbios !== undefined) health.vbios = vbios
  return presentOrAbsent(health)
}
