import type { ReportedGpuField } from "./ReportedGpu.ts"
import type { ReportedHealthField } from "./ReportedHealth.ts"

/**
 * What a reading keeps of an `nvidia-smi -q -x` document: the root's fields, and for each `<gpu>` the
 * elements of its identity and health as a tree of sections and leaves. Everything else is skipped.
 */
export type RootField = "driverVersion" | "kmdVersion" | "cudaVersion" | "cudaUmdVersion" | "attachedGpus"

export const rootElementName = "nvidia_smi_log"

export const rootFields: ReadonlyMap<string, RootField> = new Map([
  ["driver_version", "driverVersion"],
  ["kmd_version", "kmdVersion"],
  ["cuda_version", "cudaVersion"],
  ["cuda_umd_version", "cudaUmdVersion"],
  ["attached_gpus", "attachedGpus"],
])

const legacyModuleIdElement = "gpu_module_id"

/** Where a kept value goes: an identity field of the GPU, the module id of old drivers, or a health value. */
export type Kept =
  | { readonly _tag: "gpu"; readonly key: ReportedGpuField }
  | { readonly _tag: "legacy-module-id"; readonly key: string }
  | { readonly _tag: "health"; readonly key: ReportedHealthField }

/** An element of a `<gpu>` whose children are kept: the leaves whose text is read, and sections to descend into. */
export interface Section {
  readonly _tag: "section"
  /** Looked up for the children of a kept section only; the children of any other element are skipped. */
  readonly children: ReadonlyMap<string, Kept | Section>
  /**
   * Whether a child's name may have this length: most children of a kept section are not kept, and a
   * name's length rules most of them out before a lookup, which must first hash the name.
   */
  readonly nameLengths: Uint8Array
}

export const longestName = 64

const identity = (key: ReportedGpuField): Kept => ({ _tag: "gpu", key })
const health = (key: ReportedHealthField): Kept => ({ _tag: "health", key })

const section = (
  leaves: ReadonlyArray<readonly [string, Kept]>,
  sections: ReadonlyArray<readonly [string, Section]> = [],
): Section => {
  const children = new Map<string, Kept | Section>([...leaves, ...sections])
  const nameLengths = new Uint8Array(longestName)
  for (const name of children.keys()) {
    if (name.length >= longestName)
      throw new Error(`a kept element name is ${longestName} characters or longer: ${name}`)
    nameLengths[name.length] = 1
  }
  return { _tag: "section", children, nameLengths }
}

const eccCounters = (scope: "volatile" | "aggregate"): Section =>
  section(
    [
      ["sram_correctable", health(`${scope}SramCorrectable`)],
      ["dram_correctable", health(`${scope}DramCorrectable`)],
      ["sram_uncorrectable", health(`${scope}SramUncorrectable`)],
      ["sram_uncorrectable_parity", health(`${scope}SramUncorrectableParity`)],
      ["sram_uncorrectable_secded", health(`${scope}SramUncorrectableSecded`)],
      ["dram_uncorrectable", health(`${scope}DramUncorrectable`)],
    ],
    [
      // Before driver 510: `single_bit` and `double_bit` with a `total` each.
      ["single_bit", section([["total", health(`${scope}Correctable`)]])],
      ["double_bit", section([["total", health(`${scope}Uncorrectable`)]])],
    ],
  )

const clockEventReasons = (prefix: string): Section =>
  section([
    [`${prefix}_hw_slowdown`, health("hwSlowdown")],
    [`${prefix}_hw_thermal_slowdown`, health("hwThermalSlowdown")],
    [`${prefix}_hw_power_brake_slowdown`, health("hwPowerBrakeSlowdown")],
    [`${prefix}_sw_thermal_slowdown`, health("swThermalSlowdown")],
  ])

/** Every element of a `<gpu>` the reading keeps, as a tree: the identity and the health signals. */
export const gpuElement: Section = section(
  [
    ["product_name", identity("product")],
    ["serial", identity("serial")],
    ["uuid", identity("uuid")],
    ["vbios_version", health("vbios")],
    ["gpu_recovery_action", health("recoveryAction")],
    [legacyModuleIdElement, { _tag: "legacy-module-id", key: legacyModuleIdElement }],
  ],
  [
    [
      "pci",
      section(
        [
          ["pci_bus_id", identity("pciBusId")],
          ["replay_counter", health("replays")],
        ],
        [
          [
            "pci_gpu_link_info",
            section(
              [],
              [
                [
                  "pcie_gen",
                  section([
                    ["current_link_gen", health("linkGenCurrent")],
                    ["max_link_gen", health("linkGenMax")],
                  ]),
                ],
                [
                  "link_widths",
                  section([
                    ["current_link_width", health("linkWidthCurrent")],
                    ["max_link_width", health("linkWidthMax")],
                  ]),
                ],
              ],
            ),
          ],
        ],
      ),
    ],
    ["mig_mode", section([["current_mig", identity("migMode")]])],
    [
      "platformInfo",
      section([
        ["chassis_serial_number", identity("chassisSerial")],
        ["slot_number", identity("slotNumber")],
        ["tray_index", identity("trayIndex")],
        ["host_id", identity("hostId")],
        ["peer_type", identity("peerType")],
        ["module_id", identity("moduleId")],
        ["gpu_fabric_guid", identity("fabricGuid")],
      ]),
    ],
    [
      "gpu_reset_status",
      section([
        ["reset_required", health("resetRequired")],
        ["drain_and_reset_recommended", health("drainAndResetRecommended")],
      ]),
    ],
    ["clocks_event_reasons", clockEventReasons("clocks_event_reason")],
    ["clocks_throttle_reasons", clockEventReasons("clocks_throttle_reason")],
    ["clocks_throttle", clockEventReasons("clocks_throttle_reason")],
    ["ecc_mode", section([["current_ecc", health("eccMode")]])],
    [
      "ecc_errors",
      section(
        [],
        [
          ["volatile", eccCounters("volatile")],
          ["aggregate", eccCounters("aggregate")],
        ],
      ),
    ],
    [
      "retired_pages",
      section(
        [
          ["pending_retirement", health("retiredPending")],
          ["pending_blacklist", health("retiredPendingBlacklist")],
        ],
        [
          ["multiple_single_bit_retirement", section([["retired_count", health("retiredSingleBit")]])],
          ["double_bit_retirement", section([["retired_count", health("retiredDoubleBit")]])],
        ],
      ),
    ],
    [
      "remapped_rows",
      section([
        ["remapped_row_corr", health("remappedCorrectable")],
        ["remapped_row_unc", health("remappedUncorrectable")],
        ["remapped_row_pending", health("remappedPending")],
        ["remapped_row_failure", health("remappedFailure")],
      ]),
    ],
    [
      "fabric",
      section(
        [
          ["state", health("fabricState")],
          ["status", health("fabricStatus")],
          ["cliqueId", health("fabricCliqueId")],
          ["clusterUuid", health("fabricClusterUuid")],
        ],
        [["health", section([["summary", health("fabricSummary")]])]],
      ),
    ],
  ],
)

/** Depth of a `<gpu>`'s children; the kept tree is no deeper than this plus four. */
export const gpuChildDepth = 2
export const sectionSlots = 8
