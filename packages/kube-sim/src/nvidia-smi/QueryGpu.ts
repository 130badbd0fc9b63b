import { isAtLeast } from "../catalog/DriverRelease.ts"
import { maxLinkWidth } from "../catalog/GpuCondition.ts"
import type { HostGpu, SimulatedHost } from "../catalog/SimulatedHost.ts"
import { featuresOf } from "./DriverFeatures.ts"
import { readingsOf } from "./GpuReadings.ts"
import { fabricStatus, reportsRemappedRows, reportsRetiredPages, resetStatus } from "./HealthFields.ts"
import { queryTimestamp } from "./ReportTimestamp.ts"

interface FieldContext {
  readonly host: SimulatedHost
  readonly gpu: HostGpu
  readonly now: Date
}

/** One `--query-gpu` property: its value for a GPU, and its unit as the CSV header shows it. */
interface QueryField {
  readonly unit?: string
  /** First driver release that knows the field; older ones reject it. */
  readonly since?: string
  /** First driver release that no longer knows the field. */
  readonly until?: string
  readonly value: (context: FieldContext) => string
}

const notAvailable = "[N/A]"
const orNotAvailable = (value: string | number | undefined): string =>
  value === undefined || value === "N/A" ? notAvailable : String(value)
const hex = (value: number, width: number) => `0x${value.toString(16).toUpperCase().padStart(width, "0")}`

const migMode = ({ host, gpu }: FieldContext) =>
  !host.model.migCapable ? notAvailable : gpu.identity.migProfiles.length > 0 ? "Enabled" : "Disabled"

const hbmSensors = (context: FieldContext) =>
  ["Hopper", "Blackwell", "Ampere"].includes(context.host.model.architecture)

const eventReasonNames = [
  "applications_clocks_setting",
  "sw_power_cap",
  "hw_slowdown",
  "hw_thermal_slowdown",
  "hw_power_brake_slowdown",
  "sw_thermal_slowdown",
  "sync_boost",
]

/** Idle-clock event reasons, also under the older `clocks_throttle_reasons.` names. */
const eventReasonFields = (prefix: string): Record<string, QueryField> => ({
  [`${prefix}.supported`]: { value: () => "0x00000000000001FF" },
  [`${prefix}.active`]: { value: () => "0x0000000000000001" },
  [`${prefix}.gpu_idle`]: { value: () => "Active" },
  ...Object.fromEntries(eventReasonNames.map((name) => [`${prefix}.${name}`, { value: () => "Not Active" }])),
})

const remappedRows = (value: (context: FieldContext) => string) => (context: FieldContext) =>
  reportsRemappedRows(context.host.model, context.gpu.identity.migProfiles.length > 0) === undefined
    ? notAvailable
    : value(context)

const retiredPages = (value: (context: FieldContext) => string) => (context: FieldContext) =>
  reportsRetiredPages(context.host.model) ? value(context) : notAvailable

const yesNo = (flag: boolean) => (flag ? "Yes" : "No")

/** ECC error totals; every uncorrectable error of a simulated board is in device memory (DRAM). */
const eccCount = (count: (context: FieldContext) => number) => (context: FieldContext) =>
  context.host.model.ecc ? String(count(context)) : notAvailable

const eccFields: Record<string, QueryField> = Object.fromEntries(
  (["volatile", "aggregate"] as const).flatMap((scope) => {
    const uncorrected = ({ gpu }: FieldContext) =>
      scope === "volatile"
        ? gpu.identity.condition.volatileUncorrectable
        : gpu.identity.condition.aggregateUncorrectable
    return [
      [`ecc.errors.corrected.${scope}.total`, { value: eccCount(() => 0) }],
      [`ecc.errors.corrected.${scope}.dram`, { value: eccCount(() => 0) }],
      [`ecc.errors.corrected.${scope}.sram`, { value: eccCount(() => 0) }],
      [`ecc.errors.uncorrected.${scope}.total`, { value: eccCount(uncorrected) }],
      [`ecc.errors.uncorrected.${scope}.dram`, { value: eccCount(uncorrected) }],
      [`ecc.errors.uncorrected.${scope}.sram`, { value: eccCount(() => 0) }],
    ]
  }),
)

/** `gpu_recovery_action` as the driver writes it. */
const recoveryActionText = {
  none: "None",
  reset: "Reset",
  reboot: "Reboot",
  "drain-p2p": "Drain P2P",
  "drain-and-reset": "Drain and Reset",
} as const

const migNotAvailable = ({ gpu }: FieldContext) => (gpu.identity.migProfiles.length > 0 ? notAvailable : "0 %")

const fields: Readonly<Record<string, QueryField>> = {
  ...eventReasonFields("clocks_event_reasons"),
  ...eventReasonFields("clocks_throttle_reasons"),
  "pci.baseClass": { value: () => "0x3" },
  "pci.subClass": { value: ({ host }) => (host.model.productBrand === "GeForce" ? "0x0" : "0x2") },
  "pcie.link.gen.gpucurrent": {
    value: ({ host }) => String(Math.min(host.model.pcieGeneration, host.model.hostPcieGeneration)),
  },
  "pcie.link.gen.gpumax": { value: ({ host }) => String(host.model.pcieGeneration) },
  "pcie.link.gen.hostmax": {
    value: ({ host }) => (host.pool.cloud === "bare-metal" ? String(host.model.hostPcieGeneration) : notAvailable),
  },
  display_attached: { since: "580", value: ({ host }) => (host.model.productBrand === "GeForce" ? "Yes" : "No") },
  addressing_mode: {
    value: ({ host }) =>
      host.model.architecture === "Blackwell" ? "ATS" : featuresOf(host.driver.version).pdi ? "HMM" : "None",
  },
  "inforom.checksum_validation": { value: () => "valid" },
  "temperature.gpu.tlimit": {
    value: ({ host, gpu }) =>
      ["Hopper", "Blackwell", "Ada Lovelace"].includes(host.model.architecture)
        ? String(87 - readingsOf(host.model, gpu.identity).temperatureC)
        : notAvailable,
  },
  "power.management": { value: () => "Enabled" },
  "power.draw.average": {
    unit: "W",
    since: "550",
    value: ({ host, gpu }) => `${readingsOf(host.model, gpu.identity).powerDrawW.toFixed(2)} W`,
  },
  "power.default_limit": { unit: "W", value: ({ host }) => `${host.model.powerLimitW.toFixed(2)} W` },
  "power.min_limit": { unit: "W", value: ({ host }) => `${host.model.minPowerLimitW.toFixed(2)} W` },
  "power.max_limit": { unit: "W", value: ({ host }) => `${host.model.powerLimitW.toFixed(2)} W` },
  "clocks.current.video": {
    unit: "MHz",
    value: ({ host, gpu }) => `${readingsOf(host.model, gpu.identity).videoClockMHz} MHz`,
  },
  "clocks.applications.graphics": { unit: "MHz", value: ({ host }) => `${host.model.maxGraphicsMHz} MHz` },
  "clocks.applications.memory": { unit: "MHz", value: ({ host }) => `${host.model.maxMemoryMHz} MHz` },
  "clocks.default_applications.graphics": { unit: "MHz", value: ({ host }) => `${host.model.maxGraphicsMHz} MHz` },
  "clocks.default_applications.memory": { unit: "MHz", value: ({ host }) => `${host.model.maxMemoryMHz} MHz` },
  "utilization.encoder": { unit: "%", value: migNotAvailable },
  "utilization.decoder": { unit: "%", value: migNotAvailable },
  "utilization.jpeg": { unit: "%", since: "550", value: migNotAvailable },
  "utilization.ofa": { unit: "%", since: "550", value: migNotAvailable },
  "encoder.stats.sessionCount": { value: () => "0" },
  "encoder.stats.averageFps": { value: () => "0" },
  "encoder.stats.averageLatency": { value: () => "0" },
  "c2c.mode": {
    since: "555",
    value: ({ host }) => (host.model.architecture === "Blackwell" ? "Enabled" : notAvailable),
  },
  // The fabric state came with the `fabric` element (525); its clique and cluster with 550.
  "fabric.state": { value: ({ host }) => (host.model.nvswitchFabric ? "Completed" : notAvailable) },
  "fabric.status": {
    value: ({ host, gpu }) => orNotAvailable(fabricStatus(host.model, gpu.identity.condition).status),
  },
  "fabric.health.summary": {
    since: "580",
    value: ({ host, gpu }) => orNotAvailable(fabricStatus(host.model, gpu.identity.condition).summary),
  },
  "fabric.cliqueId": {
    since: "550",
    value: ({ host }) =>
      host.rack !== undefined ? String(host.rack.cliqueId) : host.model.nvswitchFabric ? "0" : notAvailable,
  },
  "fabric.clusterUuid": {
    since: "550",
    value: ({ host }) =>
      host.rack !== undefined
        ? host.rack.clusterUuid
        : host.model.nvswitchFabric
          ? "00000000-0000-0000-0000-000000000000"
          : notAvailable,
  },
  "retired_pages.single_bit_ecc.count": { value: retiredPages(() => "0") },
  "retired_pages.double_bit.count": {
    value: retiredPages(({ gpu }) => String(gpu.identity.condition.retiredDoubleBit)),
  },
  "retired_pages.pending": { value: retiredPages(({ gpu }) => yesNo(gpu.identity.condition.retirementPending)) },
  "remapped_rows.correctable": { value: remappedRows(() => "0") },
  "remapped_rows.uncorrectable": {
    value: remappedRows(({ gpu }) => String(gpu.identity.condition.remappedUncorrectable)),
  },
  "remapped_rows.pending": { value: remappedRows(({ gpu }) => yesNo(gpu.identity.condition.remapPending)) },
  "remapped_rows.failure": { value: remappedRows(({ gpu }) => yesNo(gpu.identity.condition.remapFailure)) },
  ...eccFields,
  "protected_memory.total": { unit: "MiB", value: () => "0 MiB" },
  "protected_memory.used": { unit: "MiB", value: () => "0 MiB" },
  "protected_memory.free": { unit: "MiB", value: () => "0 MiB" },
  timestamp: { value: ({ now }) => queryTimestamp(now) },
  driver_version: { value: ({ host }) => host.driver.version },
  count: { value: ({ host }) => String(host.gpus.length) },
  name: { value: ({ host }) => host.model.productName },
  serial: { value: ({ gpu }) => orNotAvailable(gpu.identity.serial) },
  uuid: { value: ({ gpu }) => gpu.identity.uuid },
  "pci.bus_id": { value: ({ gpu }) => gpu.slot.pciBusId },
  "pci.domain": { value: ({ gpu }) => hex(gpu.slot.domain, 4) },
  "pci.bus": { value: ({ gpu }) => hex(gpu.slot.bus, 2) },
  "pci.device": { value: ({ gpu }) => hex(gpu.slot.device, 2) },
  "pci.device_id": { value: ({ host }) => `0x${host.model.pciDeviceId}` },
  "pci.sub_device_id": { value: ({ host }) => `0x${host.model.pciSubSystemId}` },
  "pcie.link.gen.current": {
    value: ({ host }) => String(Math.min(host.model.pcieGeneration, host.model.hostPcieGeneration)),
  },
  "pcie.link.gen.max": {
    value: ({ host }) => String(Math.min(host.model.pcieGeneration, host.model.hostPcieGeneration)),
  },
  "pcie.link.width.current": { value: ({ gpu }) => String(gpu.identity.condition.linkWidth) },
  "pcie.link.width.max": { value: () => String(maxLinkWidth) },
  index: { value: ({ gpu }) => String(gpu.slot.index) },
  display_mode: { value: () => "Enabled" },
  display_active: { value: () => "Disabled" },
  persistence_mode: { value: () => "Enabled" },
  "accounting.mode": { value: () => "Disabled" },
  "accounting.buffer_size": { value: () => "4000" },
  "driver_model.current": { value: () => notAvailable },
  "driver_model.pending": { value: () => notAvailable },
  vbios_version: { value: ({ host }) => host.model.vbiosVersion },
  "inforom.img": { value: ({ host }) => host.model.inforomImage },
  "inforom.oem": { value: ({ host }) => host.model.inforomOem },
  "inforom.ecc": { value: ({ host }) => (host.model.ecc ? host.model.inforomEcc : notAvailable) },
  "inforom.pwr": { value: () => notAvailable },
  "gom.current": { value: () => notAvailable },
  "gom.pending": { value: () => notAvailable },
  "fan.speed": {
    unit: "%",
    value: ({ host, gpu }) =>
      host.model.productBrand === "GeForce" ? `${30 + (gpu.identity.variance % 20)} %` : notAvailable,
  },
  pstate: { value: () => "P0" },
  "memory.total": { unit: "MiB", value: ({ host }) => `${host.model.memoryMiB} MiB` },
  "memory.reserved": { unit: "MiB", value: ({ host }) => `${host.model.reservedMiB} MiB` },
  "memory.used": { unit: "MiB", value: ({ host, gpu }) => `${readingsOf(host.model, gpu.identity).memoryUsedMiB} MiB` },
  "memory.free": {
    unit: "MiB",
    value: ({ host, gpu }) =>
      `${host.model.memoryMiB - host.model.reservedMiB - readingsOf(host.model, gpu.identity).memoryUsedMiB} MiB`,
  },
  compute_mode: { value: () => "Default" },
  compute_cap: { value: ({ host }) => host.model.computeCapability },
  "utilization.gpu": { unit: "%", value: ({ gpu }) => (gpu.identity.migProfiles.length > 0 ? notAvailable : "0 %") },
  "utilization.memory": { unit: "%", value: ({ gpu }) => (gpu.identity.migProfiles.length > 0 ? notAvailable : "0 %") },
  "ecc.mode.current": { value: ({ host }) => (host.model.ecc ? "Enabled" : notAvailable) },
  "ecc.mode.pending": { value: ({ host }) => (host.model.ecc ? "Enabled" : notAvailable) },
  "temperature.gpu": { value: ({ host, gpu }) => String(readingsOf(host.model, gpu.identity).temperatureC) },
  "temperature.memory": {
    value: (context) =>
      hbmSensors(context)
        ? String(readingsOf(context.host.model, context.gpu.identity).memoryTemperatureC)
        : notAvailable,
  },
  "power.draw": {
    unit: "W",
    value: ({ host, gpu }) => `${readingsOf(host.model, gpu.identity).powerDrawW.toFixed(2)} W`,
  },
  "power.limit": { unit: "W", value: ({ host }) => `${host.model.powerLimitW.toFixed(2)} W` },
  "enforced.power.limit": { unit: "W", value: ({ host }) => `${host.model.powerLimitW.toFixed(2)} W` },
  "clocks.current.graphics": {
    unit: "MHz",
    value: ({ host, gpu }) => `${readingsOf(host.model, gpu.identity).graphicsClockMHz} MHz`,
  },
  "clocks.current.sm": {
    unit: "MHz",
    value: ({ host, gpu }) => `${readingsOf(host.model, gpu.identity).graphicsClockMHz} MHz`,
  },
  "clocks.current.memory": { unit: "MHz", value: ({ host }) => `${host.model.maxMemoryMHz} MHz` },
  "clocks.max.graphics": { unit: "MHz", value: ({ host }) => `${host.model.maxGraphicsMHz} MHz` },
  "clocks.max.sm": { unit: "MHz", value: ({ host }) => `${host.model.maxGraphicsMHz} MHz` },
  "clocks.max.memory": { unit: "MHz", value: ({ host }) => `${host.model.maxMemoryMHz} MHz` },
  "mig.mode.current": { value: migMode },
  "mig.mode.pending": { value: migMode },
  gpu_recovery_action: {
    since: "570",
    value: ({ gpu }) => recoveryActionText[gpu.identity.condition.recoveryAction],
  },
  "reset_status.reset_required": {
    until: "580",
    value: ({ host, gpu }) => resetStatus(host.model, gpu.identity.condition).resetRequired,
  },
  "reset_status.drain_and_reset_recommended": {
    until: "580",
    value: ({ host, gpu }) => orNotAvailable(resetStatus(host.model, gpu.identity.condition).drainAndResetRecommended),
  },
  "platform.chassis_serial_number": { since: "570", value: ({ host }) => orNotAvailable(host.rack?.chassisSerial) },
  "platform.slot_number": { since: "570", value: ({ host }) => orNotAvailable(host.rack?.slotNumber) },
  "platform.tray_index": { since: "570", value: ({ host }) => orNotAvailable(host.rack?.trayIndex) },
  "platform.host_id": { since: "570", value: ({ host }) => orNotAvailable(host.rack?.hostId) },
  "platform.peer_type": {
    since: "570",
    value: ({ host }) => (host.rack === undefined ? notAvailable : "Switch Connected"),
  },
  "platform.module_id": { since: "570", value: ({ gpu }) => String(gpu.slot.moduleId) },
  "platform.gpu_fabric_guid": { since: "570", value: ({ gpu }) => orNotAvailable(gpu.identity.fabricGuid) },
}

/** Alternative spellings the real tool accepts for the same property. */
const aliases: Readonly<Record<string, string>> = {
  gpu_name: "name",
  gpu_serial: "serial",
  gpu_uuid: "uuid",
  gpu_bus_id: "pci.bus_id",
  "clocks.gr": "clocks.current.graphics",
  "clocks.sm": "clocks.current.sm",
  "clocks.mem": "clocks.current.memory",
  "clocks.max.gr": "clocks.max.graphics",
  "clocks.max.mem": "clocks.max.memory",
  "power.draw.instant": "power.draw",
  "clocks.video": "clocks.current.video",
  "retired_pages.sbe": "retired_pages.single_bit_ecc.count",
  "retired_pages.dbe": "retired_pages.double_bit.count",
  "remapped_rows.sbe": "remapped_rows.correctable",
  "remapped_rows.dbe": "remapped_rows.uncorrectable",
}

export interface CsvFormat {
  readonly header: boolean
  readonly units: boolean
}

export type QueryOutcome = { readonly csv: string } | { readonly invalidField: string }

/**
 * `--query-gpu=<fields> --format=csv[,noheader][,nounits]`: one CSV line per GPU with the fields in the
 * order asked, `[N/A]` where a GPU has no value. A field the driver does not know (every `platform.*`
 * field before 570, `reset_status.*` from 580) rejects the whole query, as the real tool does.
 */
export const queryGpu = (
  host: SimulatedHost,
  gpus: ReadonlyArray<HostGpu>,
  requested: ReadonlyArray<string>,
  format: CsvFormat,
  now: Date,
): QueryOutcome => {
  const resolved: QueryField[] = []
  for (const name of requested) {
    const field = fields[aliases[name] ?? name]
    if (
      field === undefined ||
      (field.since !== undefined && !isAtLeast(host.driver.version, field.since)) ||
      (field.until !== undefined && isAtLeast(host.driver.version, field.until))
    )
      return { invalidField: name }
    resolved.push(field)
  }
  const lines: string[] = []
  if (format.header)
    lines.push(
      requested
        .map((name, index) => {
          const unit = resolved[index]?.unit
          return unit === undefined || !format.units ? name : `${name} [${unit}]`
        })
        .join(", "),
    )
  for (const gpu of gpus) {
    const context = { host, gpu, now }
    lines.push(
      resolved
        .map((field) => {
          const value = field.value(context)
          return format.units || field.unit === undefined || value === notAvailable
            ? value
            : value.slice(0, value.length - field.unit.length - 1)
        })
        .join(", "),
    )
  }
  return { csv: lines.map((line) => `${line}\n`).join("") }
}
