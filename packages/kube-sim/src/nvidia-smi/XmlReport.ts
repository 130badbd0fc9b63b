import { conditionKey, type GpuCondition, maxLinkWidth } from "../catalog/GpuCondition.ts"
import type { GpuModel } from "../catalog/GpuModel.ts"
import { migProfiles } from "../catalog/GpuModel.ts"
import type { HostGpu, SimulatedHost } from "../catalog/SimulatedHost.ts"
import type { ProcessOutput } from "../cluster/ProcessOutput.ts"
import { type DriverFeatures, featuresOf } from "./DriverFeatures.ts"
import { type GpuFacts, gpuFactNames, gpuFactsOf } from "./GpuFacts.ts"
import { wattsText } from "./GpuReadings.ts"
import { fabricStatus, reportsRemappedRows, reportsRetiredPages, resetStatus } from "./HealthFields.ts"
import { reportTimestamp } from "./ReportTimestamp.ts"

const tabs = ["", "\t", "\t\t", "\t\t\t", "\t\t\t\t", "\t\t\t\t\t", "\t\t\t\t\t\t"]
const indent = (depth: number): string => tabs[depth] ?? "\t".repeat(depth)

const escapeXml = (text: string): string =>
  /[<>&"]/.test(text)
    ? text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;")
    : text

const leaf = (depth: number, tag: string, value: string | number): string =>
  `${indent(depth)}<${tag}>${typeof value === "number" ? value : escapeXml(value)}</${tag}>\n`

const block = (depth: number, tag: string, inner: string): string =>
  `${indent(depth)}<${tag}>\n${inner}${indent(depth)}</${tag}>\n`

const leaves = (depth: number, entries: ReadonlyArray<readonly [string, string | number]>): string =>
  entries.map(([tag, value]) => leaf(depth, tag, value)).join("")

/** Sections that are identical for every GPU of a model on a driver release, rendered once and reused. */
const staticSections = new Map<string, string>()

const memoized = (key: string, render: () => string): string => {
  let text = staticSections.get(key)
  if (text === undefined) {
    text = render()
    staticSections.set(key, text)
  }
  return text
}

/**
 * The `nvidia-smi -q -x` document of a host: the element structure of the real tool for the host's
 * driver release (DTD v12 up to 570, v13 from 580), one `<gpu>` per reported GPU in PCI order.
 * `attachedGpus` may exceed the GPUs listed when the driver lost track of one.
 */
export const xmlReport = (
  host: SimulatedHost,
  now: Date,
  output: ProcessOutput,
  gpus: ReadonlyArray<HostGpu> = host.gpus,
): void => {
  const features = featuresOf(host.driver.version)
  output.write(
    '<?xml version="1.0" ?>\n' +
      `<!DOCTYPE nvidia_smi_log SYSTEM "${features.dtd}">\n` +
      "<nvidia_smi_log>\n" +
      leaf(1, "timestamp", reportTimestamp(now)) +
      leaf(1, "driver_version", host.driver.version) +
      leaf(1, "cuda_version", host.driver.cudaVersion) +
      leaf(1, "attached_gpus", host.gpus.length),
  )
  for (const gpu of gpus) {
    const migEnabled = gpu.identity.migProfiles.length > 0
    fill(
      templateOf(host.model, host.driver.version, features, migEnabled, gpu.identity.condition),
      gpuFactsOf(host, gpu, migDevices),
      output,
    )
  }
  output.write(documentEnd)
}

const documentEnd = Buffer.from("\n</nvidia_smi_log>\n", "utf8")

/**
 * A `<gpu>` element is rendered once per model, driver release, MIG state and board condition with
 * markers in place of the per-GPU facts, and split there; each report then only fills in the facts.
 */
interface GpuTemplate {
  readonly pieces: ReadonlyArray<Buffer>
  readonly fields: ReadonlyArray<keyof GpuFacts>
}

const templates = new Map<string, GpuTemplate>()
const marker = "\u0001"

const templateOf = (
  model: GpuModel,
  driverVersion: string,
  features: DriverFeatures,
  migEnabled: boolean,
  condition: GpuCondition,
): GpuTemplate => {
  const key = `${model.name}|${driverVersion}|${migEnabled}|${conditionKey(condition)}`
  let template = templates.get(key)
  if (template === undefined) {
    const markers = {} as Record<keyof GpuFacts, string>
    for (const name of gpuFactNames) markers[name] = `${marker}${name}${marker}`
    const split = renderGpu(model, driverVersion, features, migEnabled, condition, markers).split(marker)
    template = {
      pieces: split.filter((_, index) => index % 2 === 0).map((piece) => Buffer.from(piece, "utf8")),
      fields: split.filter((_, index) => index % 2 === 1) as Array<keyof GpuFacts>,
    }
    templates.set(key, template)
  }
  return template
}

/** Writes a filled template; the static pieces are kept encoded, so a report is a series of copies. */
const fill = (template: GpuTemplate, facts: GpuFacts, output: ProcessOutput): void => {
  const { pieces, fields } = template
  output.write(pieces[0] as Buffer)
  for (let index = 0; index < fields.length; index++) {
    output.write(facts[fields[index] as keyof GpuFacts])
    output.write(pieces[index + 1] as Buffer)
  }
}

const renderGpu = (
  model: GpuModel,
  driverVersion: string,
  features: DriverFeatures,
  migEnabled: boolean,
  condition: GpuCondition,
  facts: GpuFacts,
): string => {
  const key = `${model.name}|${driverVersion}`
  const healthKey = `${key}|${migEnabled}|${conditionKey(condition)}`
  const migMode = !model.migCapable ? "N/A" : migEnabled ? "Enabled" : "Disabled"
  const parts: string[] = [
    `${indent(1)}<gpu id="${facts.busId}">\n`,
    leaf(2, "product_name", model.productName),
    leaf(2, "product_brand", model.productBrand),
    leaf(2, "product_architecture", model.architecture),
    leaf(2, "display_mode", features.pdi ? "Requested functionality has been deprecated" : "Enabled"),
  ]
  if (features.pdi) parts.push(leaf(2, "display_attached", model.productBrand === "GeForce" ? "Yes" : "No"))
  parts.push(
    leaf(2, "display_active", "Disabled"),
    leaf(2, "persistence_mode", "Enabled"),
    leaf(2, "addressing_mode", model.architecture === "Blackwell" ? "ATS" : features.pdi ? "HMM" : "None"),
    block(
      2,
      "mig_mode",
      leaves(3, [
        ["current_mig", migMode],
        ["pending_mig", migMode],
      ]),
    ),
    migEnabled ? facts.migDevices : `${indent(2)}<mig_devices>\n${indent(3)}None\n${indent(2)}</mig_devices>\n`,
    leaf(2, "accounting_mode", "Disabled"),
    leaf(2, "accounting_mode_buffer_size", 4000),
    block(
      2,
      "driver_model",
      leaves(3, [
        ["current_dm", "N/A"],
        ["pending_dm", "N/A"],
      ]),
    ),
    leaf(2, "serial", facts.serial),
    leaf(2, "uuid", facts.uuid),
  )
  if (features.pdi) parts.push(leaf(2, "pdi", facts.pdi))
  parts.push(
    leaf(2, "minor_number", facts.minorNumber),
    leaf(2, "vbios_version", model.vbiosVersion),
    leaf(2, "multigpu_board", "No"),
    leaf(2, "board_id", facts.boardId),
    leaf(2, "board_part_number", model.boardPartNumber),
    leaf(2, "gpu_part_number", model.gpuPartNumber),
    leaf(2, "gpu_fru_part_number", "N/A"),
  )
  if (features.platformInfo) {
    const platform: Array<readonly [string, string | number]> = [
      ["chassis_serial_number", facts.chassisSerial],
      ["slot_number", facts.slotNumber],
      ["tray_index", facts.trayIndex],
      ["host_id", facts.hostId],
      ["peer_type", facts.peerType],
      ["module_id", facts.moduleId],
    ]
    if (features.fabricGuid) platform.push(["gpu_fabric_guid", facts.fabricGuid])
    parts.push(block(2, "platformInfo", leaves(3, platform)))
  } else parts.push(leaf(2, "gpu_module_id", facts.moduleId))
  parts.push(
    block(
      2,
      "inforom_version",
      leaves(3, [
        ["img_version", model.inforomImage],
        ["oem_object", model.inforomOem],
        ["ecc_object", model.ecc ? model.inforomEcc : "N/A"],
        ["pwr_object", "N/A"],
      ]),
    ),
  )
  if (features.bbxFlush)
    parts.push(
      block(
        2,
        "inforom_bbx_flush",
        model.ecc
          ? leaves(3, [
              ["latest_timestamp", "2025/09/10 17:11:48.374"],
              ["latest_duration", facts.bbxDuration],
            ])
          : leaves(3, [
              ["latest_timestamp", "N/A"],
              ["latest_duration", "N/A"],
            ]),
      ),
    )
  parts.push(
    block(
      2,
      "gpu_operation_mode",
      leaves(3, [
        ["current_gom", "N/A"],
        ["pending_gom", "N/A"],
      ]),
    ),
  )
  if (features.c2cMode) parts.push(leaf(2, "c2c_mode", model.architecture === "Blackwell" ? "Enabled" : "N/A"))
  const virtualization: Array<readonly [string, string]> = [
    ["virtualization_mode", facts.virtualizationMode],
    ["host_vgpu_mode", "N/A"],
  ]
  if (features.vgpuHeterogeneousMode) virtualization.push(["vgpu_heterogeneous_mode", "N/A"])
  parts.push(block(2, "gpu_virtualization_mode", leaves(3, virtualization)))
  if (features.resetStatus) {
    const reset = resetStatus(model, condition)
    parts.push(
      block(
        2,
        "gpu_reset_status",
        leaves(3, [
          ["reset_required", reset.resetRequired],
          ["drain_and_reset_recommended", reset.drainAndResetRecommended],
        ]),
      ),
    )
  }
  if (features.recoveryAction) parts.push(leaf(2, "gpu_recovery_action", recoveryActionText[condition.recoveryAction]))
  parts.push(
    leaf(2, "gsp_firmware_version", model.productBrand === "GeForce" ? "N/A" : driverVersion),
    block(2, "ibmnpu", leaf(3, "relaxed_ordering_mode", "N/A")),
    pciBlock(model, features, condition, facts),
    leaf(2, "fan_speed", facts.fanSpeed),
    leaf(2, "performance_state", "P0"),
    memoized(`${key}|events`, () => eventReasons(features)),
    features.fabricIdentity
      ? leaf(2, "sparse_operation_mode", model.architecture === "Hopper" ? "Disabled" : "N/A")
      : "",
    block(
      2,
      "fb_memory_usage",
      leaves(3, [
        ["total", `${model.memoryMiB} MiB`],
        ["reserved", `${model.reservedMiB} MiB`],
        ["used", facts.memoryUsed],
        ["free", facts.memoryFree],
      ]),
    ),
    block(
      2,
      "bar1_memory_usage",
      leaves(3, [
        ["total", `${model.bar1MiB} MiB`],
        ["used", "1 MiB"],
        ["free", `${model.bar1MiB - 1} MiB`],
      ]),
    ),
    memoized(`${healthKey}|middle`, () => middleSections(model, features, migEnabled, condition)),
    temperatureBlock(model, facts),
    block(
      2,
      "supported_gpu_target_temp",
      leaves(3, [
        ["gpu_target_temp_min", "N/A"],
        ["gpu_target_temp_max", "N/A"],
      ]),
    ),
    powerBlocks(model, facts, features),
    clockBlocks(model, facts, features),
    fabricBlock(model, facts, features, condition),
    memoized(`${key}|supported_clocks`, () => supportedClocks(model)),
    `${indent(2)}<processes>\n${indent(2)}</processes>\n`,
    `${indent(2)}<accounted_processes>\n${indent(2)}</accounted_processes>\n`,
  )
  if (features.capabilities) parts.push(block(2, "capabilities", leaf(3, "egm", "disabled")))
  parts.push(`${indent(1)}</gpu>\n`)
  return parts.join("")
}

/** The `<mig_devices>` element of a MIG-enabled GPU, one `<mig_device>` per instance. */
const migDevices = (gpu: HostGpu): string => {
  const used = new Map<string, number>()
  const devices = gpu.identity.migProfiles.map((name, index) => {
    const profile = migProfiles[name]
    if (profile === undefined) return ""
    const taken = used.get(name) ?? 0
    used.set(name, taken + 1)
    const instanceId = profile.gpuInstanceIds[taken] ?? taken
    return block(
      3,
      "mig_device",
      leaves(4, [
        ["index", index],
        ["gpu_instance_id", instanceId],
        ["compute_instance_id", 0],
      ]) +
        block(
          4,
          "device_attributes",
          block(
            5,
            "shared",
            leaves(6, [
              ["multiprocessor_count", profile.multiprocessors],
              ["copy_engine_count", profile.copyEngines],
              ["encoder_count", 0],
              ["decoder_count", profile.decoders],
              ["ofa_count", profile.ofas],
              ["jpg_count", profile.jpegs],
            ]),
          ),
        ) +
        block(4, "ecc_error_count", block(5, "volatile_count", leaf(6, "sram_uncorrectable", 0))) +
        block(
          4,
          "fb_memory_usage",
          leaves(5, [
            ["total", `${profile.memoryMiB} MiB`],
            ["reserved", "0 MiB"],
            ["used", "12 MiB"],
            ["free", `${profile.memoryMiB - 13} MiB`],
          ]),
        ) +
        block(
          4,
          "bar1_memory_usage",
          leaves(5, [
            ["total", `${profile.bar1MiB} MiB`],
            ["used", "0 MiB"],
            ["free", `${profile.bar1MiB} MiB`],
          ]),
        ),
    )
  })
  return block(2, "mig_devices", devices.join(""))
}

/** `gpu_recovery_action` as the driver writes it. */
const recoveryActionText: Readonly<Record<GpuCondition["recoveryAction"], string>> = {
  none: "None",
  reset: "Reset",
  reboot: "Reboot",
  "drain-p2p": "Drain P2P",
  "drain-and-reset": "Drain and Reset",
}

const pciBlock = (model: GpuModel, features: DriverFeatures, condition: GpuCondition, facts: GpuFacts): string => {
  const entries: Array<readonly [string, string]> = [
    ["pci_bus", facts.pciBus],
    ["pci_device", facts.pciDevice],
    ["pci_domain", facts.pciDomain],
  ]
  if (features.pciClass)
    entries.push(["pci_base_class", "3"], ["pci_sub_class", model.productBrand === "GeForce" ? "0" : "2"])
  entries.push(
    ["pci_device_id", model.pciDeviceId],
    ["pci_bus_id", facts.busId],
    ["pci_sub_system_id", model.pciSubSystemId],
  )
  const link =
    block(
      4,
      "pcie_gen",
      leaves(5, [
        ["max_link_gen", Math.min(model.pcieGeneration, model.hostPcieGeneration)],
        ["current_link_gen", Math.min(model.pcieGeneration, model.hostPcieGeneration)],
        ["device_current_link_gen", Math.min(model.pcieGeneration, model.hostPcieGeneration)],
        ["max_device_link_gen", model.pcieGeneration],
        ["max_host_link_gen", facts.maxHostLinkGeneration],
      ]),
    ) +
    block(
      4,
      "link_widths",
      leaves(5, [
        ["max_link_width", `${maxLinkWidth}x`],
        ["current_link_width", `${condition.linkWidth}x`],
      ]),
    )
  const atomics = model.architecture === "Hopper" ? "FETCHADD_32 FETCHADD_64 SWAP_32 SWAP_64 CAS_32 CAS_64 " : "N/A"
  return block(
    2,
    "pci",
    leaves(3, entries) +
      block(3, "pci_gpu_link_info", link) +
      block(
        3,
        "pci_bridge_chip",
        leaves(4, [
          ["bridge_chip_type", "N/A"],
          ["bridge_chip_fw", "N/A"],
        ]),
      ) +
      leaves(3, [
        ["replay_counter", 0],
        ["replay_rollover_counter", 0],
        ["tx_util", facts.txUtilization],
        ["rx_util", facts.rxUtilization],
        ["atomic_caps_outbound", atomics],
        ["atomic_caps_inbound", atomics],
      ]),
  )
}

const eventReasons = (features: DriverFeatures): string => {
  const reasons = [
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sync_boost",
    "sw_thermal_slowdown",
    "display_clocks_setting",
  ]
  let text = block(
    2,
    "clocks_event_reasons",
    leaves(
      3,
      reasons.map(
        (reason) => [`clocks_event_reason_${reason}`, reason === "gpu_idle" ? "Active" : "Not Active"] as const,
      ),
    ),
  )
  if (features.eventReasonCounters)
    text += block(
      2,
      "clocks_event_reasons_counters",
      leaves(
        3,
        ["sw_power_cap", "sync_boost", "sw_therm_slowdown", "hw_therm_slowdown", "hw_power_brake"].map(
          (counter) => [`clocks_event_reasons_counters_${counter}`, "0 us"] as const,
        ),
      ),
    )
  return text
}

/** From `cc_protected_memory_usage` to `remapped_rows`: constant for an idle, healthy GPU. */
const middleSections = (
  model: GpuModel,
  features: DriverFeatures,
  migEnabled: boolean,
  condition: GpuCondition,
): string => {
  const na = (tag: string) => leaf(3, tag, "N/A")
  // Uncorrectable errors of the simulated boards are in device memory, where remaps and retirements come from.
  const volatileCount = (counter: string) =>
    [counter, counter === "dram_uncorrectable" ? condition.volatileUncorrectable : 0] as const
  const aggregateCount = (counter: string) =>
    [counter, counter === "dram_uncorrectable" ? condition.aggregateUncorrectable : 0] as const
  let text =
    block(
      2,
      "cc_protected_memory_usage",
      leaves(3, [
        ["total", "0 MiB"],
        ["used", "0 MiB"],
        ["free", "0 MiB"],
      ]),
    ) +
    leaf(2, "compute_mode", "Default") +
    block(
      2,
      "utilization",
      leaves(
        3,
        ["gpu_util", "memory_util", "encoder_util", "decoder_util", "jpeg_util", "ofa_util"].map(
          (tag) => [tag, migEnabled ? "N/A" : "0 %"] as const,
        ),
      ),
    ) +
    block(
      2,
      "encoder_stats",
      leaves(3, [
        ["session_count", 0],
        ["average_fps", 0],
        ["average_latency", 0],
      ]),
    ) +
    block(
      2,
      "fbc_stats",
      leaves(3, [
        ["session_count", 0],
        ["average_fps", 0],
        ["average_latency", 0],
      ]),
    )
  if (features.dramEncryption)
    text += block(2, "dram_encryption_mode", na("current_dram_encryption") + na("pending_dram_encryption"))
  const ecc = model.ecc ? "Enabled" : "N/A"
  text += block(
    2,
    "ecc_mode",
    leaves(3, [
      ["current_ecc", ecc],
      ["pending_ecc", ecc],
    ]),
  )
  if (!model.ecc) {
    const counters = ["sram_correctable", "sram_uncorrectable", "dram_correctable", "dram_uncorrectable"]
    text += block(
      2,
      "ecc_errors",
      block(
        3,
        "volatile",
        leaves(
          4,
          counters.map((counter) => [counter, "N/A"] as const),
        ),
      ) +
        block(
          3,
          "aggregate",
          leaves(
            4,
            counters.map((counter) => [counter, "N/A"] as const),
          ),
        ),
    )
  } else if (model.detailedSramErrors && features.platformInfo) {
    const counters = [
      "sram_correctable",
      "sram_uncorrectable_parity",
      "sram_uncorrectable_secded",
      "dram_correctable",
      "dram_uncorrectable",
    ]
    text += block(
      2,
      "ecc_errors",
      block(3, "volatile", leaves(4, counters.map(volatileCount))) +
        block(
          3,
          "aggregate",
          leaves(4, [...counters.map(aggregateCount), ["sram_threshold_exceeded", "No"] as const]),
        ) +
        block(
          3,
          "aggregate_uncorrectable_sram_sources",
          leaves(
            4,
            ["sram_l2", "sram_sm", "sram_microcontroller", "sram_pcie", "sram_other"].map(
              (source) => [source, 0] as const,
            ),
          ),
        ) +
        (features.repairCounters
          ? leaves(3, [
              ["channel_repair_pending", "No"],
              ["tpc_repair_pending", "No"],
              ["unrepairable_memory", "No"],
            ])
          : ""),
    )
  } else {
    const counters = ["sram_correctable", "sram_uncorrectable", "dram_correctable", "dram_uncorrectable"]
    text += block(
      2,
      "ecc_errors",
      block(3, "volatile", leaves(4, counters.map(volatileCount))) +
        block(3, "aggregate", leaves(4, counters.map(aggregateCount))),
    )
  }
  if (reportsRetiredPages(model)) {
    const pending = condition.retirementPending ? "Yes" : "No"
    text += block(
      2,
      "retired_pages",
      block(
        3,
        "multiple_single_bit_retirement",
        `${leaf(4, "retired_count", 0)}${indent(4)}<retired_pagelist>\n${indent(4)}</retired_pagelist>\n`,
      ) +
        block(
          3,
          "double_bit_retirement",
          `${leaf(4, "retired_count", condition.retiredDoubleBit)}${indent(4)}<retired_pagelist>\n${indent(4)}</retired_pagelist>\n`,
        ) +
        leaves(3, [
          ["pending_blacklist", pending],
          ["pending_retirement", pending],
        ]),
    )
  } else
    text += block(
      2,
      "retired_pages",
      block(3, "multiple_single_bit_retirement", na("retired_count") + na("retired_pagelist")) +
        block(3, "double_bit_retirement", na("retired_count") + na("retired_pagelist")) +
        na("pending_blacklist") +
        na("pending_retirement"),
    )
  const banks = reportsRemappedRows(model, migEnabled)
  if (banks === undefined) text += leaf(2, "remapped_rows", "N/A")
  else
    text += block(
      2,
      "remapped_rows",
      leaves(3, [
        ["remapped_row_corr", 0],
        ["remapped_row_unc", condition.remappedUncorrectable],
        ...(features.repairCounters
          ? ([
              ["remapped_row_corr_inactive", 0],
              ["remapped_row_unc_inactive", 0],
            ] as const)
          : []),
        ["remapped_row_pending", condition.remapPending ? "Yes" : "No"],
        ["remapped_row_failure", condition.remapFailure ? "Yes" : "No"],
      ]) +
        block(
          3,
          "row_remapper_histogram",
          leaves(4, [
            ["row_remapper_histogram_max", `${condition.remapFailure ? banks - 1 : banks} bank(s)`],
            ["row_remapper_histogram_high", "0 bank(s)"],
            ["row_remapper_histogram_partial", "0 bank(s)"],
            ["row_remapper_histogram_low", "0 bank(s)"],
            ["row_remapper_histogram_none", `${condition.remapFailure ? 1 : 0} bank(s)`],
          ]),
        ),
    )
  return text
}

/** Hopper, Blackwell and Ada report thresholds relative to T.Limit; older architectures absolute ones. */
const temperatureBlock = (model: GpuModel, facts: GpuFacts): string => {
  const memorySensor =
    model.architecture === "Hopper" || model.architecture === "Blackwell" || model.architecture === "Ampere"
  const hbm =
    model.architecture === "Hopper" || model.architecture === "Blackwell" || model.architecture === "Ada Lovelace"
  return block(
    2,
    "temperature",
    leaves(3, [
      ["gpu_temp", facts.temperature],
      ["gpu_temp_tlimit", hbm ? facts.temperatureToLimit : "N/A"],
      [hbm ? "gpu_temp_max_tlimit_threshold" : "gpu_temp_max_threshold", hbm ? "-8 C" : "96 C"],
      [hbm ? "gpu_temp_slow_tlimit_threshold" : "gpu_temp_slow_threshold", hbm ? "-2 C" : "93 C"],
      [hbm ? "gpu_temp_max_gpu_tlimit_threshold" : "gpu_temp_max_gpu_threshold", hbm ? "0 C" : "85 C"],
      ["gpu_target_temperature", model.productBrand === "GeForce" ? "84 C" : "N/A"],
      ["memory_temp", memorySensor ? facts.memoryTemperature : "N/A"],
      [hbm ? "gpu_temp_max_mem_tlimit_threshold" : "gpu_temp_max_mem_threshold", hbm ? "0 C" : "N/A"],
    ]),
  )
}

const powerBlocks = (model: GpuModel, facts: GpuFacts, features: DriverFeatures): string => {
  const limit = wattsText(model.powerLimitW)
  const draw: Array<readonly [string, string]> = features.averagePower
    ? [
        ["average_power_draw", facts.powerDraw],
        ["instant_power_draw", facts.instantPowerDraw],
      ]
    : [["power_draw", facts.powerDraw]]
  let text = block(
    2,
    "gpu_power_readings",
    leaves(3, [
      ["power_state", "P0"],
      ...draw,
      ["current_power_limit", limit],
      ["requested_power_limit", limit],
      ["default_power_limit", limit],
      ["min_power_limit", wattsText(model.minPowerLimitW)],
      ["max_power_limit", limit],
    ]),
  )
  const hbm = model.architecture === "Hopper" || model.architecture === "Blackwell"
  if (features.memoryPowerReadings)
    text += block(
      2,
      "gpu_memory_power_readings",
      features.averagePower
        ? leaves(3, [
            ["average_power_draw", hbm ? facts.memoryPowerDraw : "N/A"],
            ["instant_power_draw", "N/A"],
          ])
        : leaf(3, "power_draw", hbm ? facts.memoryPowerDraw : "N/A"),
    )
  const module = model.modulePowerLimitW
  const moduleDraw: Array<readonly [string, string]> = features.averagePower
    ? [
        ["average_power_draw", module === undefined ? "N/A" : facts.modulePowerDraw],
        ["instant_power_draw", module === undefined ? "N/A" : facts.modulePowerDraw],
      ]
    : [["power_draw", module === undefined ? "N/A" : facts.modulePowerDraw]]
  const moduleLimit = module === undefined ? "N/A" : wattsText(module)
  text += block(
    2,
    "module_power_readings",
    leaves(3, [
      ["power_state", "P0"],
      ...moduleDraw,
      ["current_power_limit", moduleLimit],
      ["requested_power_limit", moduleLimit],
      ["default_power_limit", moduleLimit],
      ["min_power_limit", module === undefined ? "N/A" : wattsText(module / 5)],
      ["max_power_limit", moduleLimit],
    ]),
  )
  if (features.powerSmoothing)
    text +=
      leaf(2, "power_smoothing", model.architecture === "Blackwell" ? "Insufficient Permissions" : "N/A") +
      block(
        2,
        "power_profiles",
        leaves(3, [
          ["power_profile_requested_profiles", "N/A"],
          ["power_profile_enforced_profiles", "N/A"],
        ]),
      )
  if (features.edppMultiplier) text += leaf(2, "edpp_multiplier", "N/A")
  return text
}

const clockBlocks = (model: GpuModel, facts: GpuFacts, features: DriverFeatures): string => {
  const mhz = (value: number) => `${value} MHz`
  const applications = features.pdi
    ? ([
        ["graphics_clock", "Requested functionality has been deprecated"],
        ["mem_clock", "Requested functionality has been deprecated"],
      ] as const)
    : ([
        ["graphics_clock", mhz(model.maxGraphicsMHz)],
        ["mem_clock", mhz(model.maxMemoryMHz)],
      ] as const)
  let text =
    block(
      2,
      "clocks",
      leaves(3, [
        ["graphics_clock", facts.graphicsClock],
        ["sm_clock", facts.graphicsClock],
        ["mem_clock", facts.memoryClock],
        ["video_clock", facts.videoClock],
      ]),
    ) +
    block(2, "applications_clocks", leaves(3, applications)) +
    block(2, "default_applications_clocks", leaves(3, applications)) +
    block(2, "deferred_clocks", leaf(3, "mem_clock", "N/A")) +
    block(
      2,
      "max_clocks",
      leaves(3, [
        ["graphics_clock", mhz(model.maxGraphicsMHz)],
        ["sm_clock", mhz(model.maxGraphicsMHz)],
        ["mem_clock", mhz(model.maxMemoryMHz)],
        ["video_clock", mhz(model.maxVideoMHz)],
      ]),
    ) +
    block(2, "max_customer_boost_clocks", leaf(3, "graphics_clock", mhz(model.maxGraphicsMHz))) +
    block(
      2,
      "clock_policy",
      leaves(3, [
        ["auto_boost", "N/A"],
        ["auto_boost_default", "N/A"],
      ]),
    )
  if (model.productBrand === "GeForce" || (model.architecture !== "Turing" && model.architecture !== "Ada Lovelace"))
    text += block(2, "voltage", leaf(3, "graphics_volt", model.productBrand === "GeForce" ? "880.000 mV" : "N/A"))
  return text
}

const fabricBlock = (model: GpuModel, facts: GpuFacts, features: DriverFeatures, condition: GpuCondition): string => {
  const nvlink = model.nvswitchFabric
  const health: Array<readonly [string, string]> = []
  const fabric = fabricStatus(model, condition)
  if (features.extendedFabricHealth) health.push(["summary", fabric.summary])
  health.push(
    ["bandwidth", facts.fabricBandwidth],
    ["route_recovery_in_progress", facts.fabricRouteRecovery],
    ["route_unhealthy", condition.fabricDown ? "True" : facts.fabricRouteUnhealthy],
    ["access_timeout_recovery", facts.fabricAccessTimeoutRecovery],
  )
  if (features.extendedFabricHealth)
    health.push(
      ["incorrect_configuration", facts.fabricIncorrectConfiguration],
      ["partition_assigned", facts.fabricPartitionAssigned],
    )
  const state = leaves(3, [
    ["state", nvlink ? "Completed" : "N/A"],
    ["status", fabric.status],
  ])
  if (!features.fabricIdentity) return block(2, "fabric", state)
  return block(
    2,
    "fabric",
    state +
      leaves(3, [
        ["cliqueId", facts.cliqueId],
        ["clusterUuid", facts.clusterUuid],
      ]) +
      block(3, "health", leaves(4, health)),
  )
}

const supportedClocks = (model: GpuModel): string => {
  const tables = model.supportedMemoryClocks.map(({ memoryMHz, lowestGraphicsMHz }) => {
    const graphics: string[] = []
    const top = memoryMHz <= 810 ? Math.min(model.maxGraphicsMHz, 1500) : model.maxGraphicsMHz
    for (let clock = top; clock >= lowestGraphicsMHz; clock -= 15)
      graphics.push(leaf(4, "supported_graphics_clock", `${clock} MHz`))
    return block(3, "supported_mem_clock", leaf(4, "value", `${memoryMHz} MHz`) + graphics.join(""))
  })
  return block(2, "supported_clocks", tables.join(""))
}
