import { isAtLeast } from "../catalog/DriverRelease.ts"
import type { HostGpu, SimulatedHost } from "../catalog/SimulatedHost.ts"
import { ProcessOutput } from "../cluster/ProcessOutput.ts"
import { xmlReport } from "./XmlReport.ts"

/** The labels `nvidia-smi -q` prints for the elements of `-q -x`. */
const labels: Readonly<Record<string, string>> = {
  timestamp: "Timestamp",
  driver_version: "Driver Version",
  cuda_version: "CUDA Version",
  attached_gpus: "Attached GPUs",
  product_name: "Product Name",
  product_brand: "Product Brand",
  product_architecture: "Product Architecture",
  display_mode: "Display Mode",
  display_attached: "Display Attached",
  display_active: "Display Active",
  persistence_mode: "Persistence Mode",
  addressing_mode: "Addressing Mode",
  mig_mode: "MIG Mode",
  current_mig: "Current",
  pending_mig: "Pending",
  mig_device: "MIG Device",
  index: "Index",
  gpu_instance_id: "GPU Instance ID",
  compute_instance_id: "Compute Instance ID",
  device_attributes: "Device Attributes",
  shared: "Shared",
  multiprocessor_count: "Multiprocessor count",
  copy_engine_count: "Copy Engine count",
  encoder_count: "Encoder count",
  decoder_count: "Decoder count",
  ofa_count: "OFA count",
  jpg_count: "JPG count",
  ecc_error_count: "ECC Errors",
  volatile_count: "Volatile",
  accounting_mode: "Accounting Mode",
  accounting_mode_buffer_size: "Accounting Mode Buffer Size",
  driver_model: "Driver Model",
  current_dm: "Current",
  pending_dm: "Pending",
  serial: "Serial Number",
  uuid: "GPU UUID",
  pdi: "GPU PDI",
  minor_number: "Minor Number",
  vbios_version: "VBIOS Version",
  multigpu_board: "MultiGPU Board",
  board_id: "Board ID",
  board_part_number: "Board Part Number",
  gpu_part_number: "GPU Part Number",
  gpu_fru_part_number: "FRU Part Number",
  gpu_module_id: "Module ID",
  platformInfo: "Platform Info",
  chassis_serial_number: "Chassis Serial Number",
  slot_number: "Slot Number",
  tray_index: "Tray Index",
  host_id: "Host ID",
  peer_type: "Peer Type",
  module_id: "Module Id",
  gpu_fabric_guid: "GPU Fabric GUID",
  inforom_version: "Inforom Version",
  img_version: "Image Version",
  oem_object: "OEM Object",
  ecc_object: "ECC Object",
  pwr_object: "Power Management Object",
  inforom_bbx_flush: "Inforom BBX Object Flush",
  latest_timestamp: "Latest Timestamp",
  latest_duration: "Latest Duration",
  gpu_operation_mode: "GPU Operation Mode",
  current_gom: "Current",
  pending_gom: "Pending",
  c2c_mode: "C2C Mode",
  gpu_virtualization_mode: "GPU Virtualization Mode",
  virtualization_mode: "Virtualization Mode",
  host_vgpu_mode: "Host VGPU Mode",
  vgpu_heterogeneous_mode: "vGPU Heterogeneous Mode",
  gpu_reset_status: "GPU Reset Status",
  reset_required: "Reset Required",
  drain_and_reset_recommended: "Drain and Reset Recommended",
  gpu_recovery_action: "GPU Recovery Action",
  gsp_firmware_version: "GSP Firmware Version",
  ibmnpu: "IBMNPU",
  relaxed_ordering_mode: "Relaxed Ordering Mode",
  pci: "PCI",
  pci_bus: "Bus",
  pci_device: "Device",
  pci_domain: "Domain",
  pci_base_class: "Base Classcode",
  pci_sub_class: "Sub Classcode",
  pci_device_id: "Device Id",
  pci_bus_id: "Bus Id",
  pci_sub_system_id: "Sub System Id",
  pci_gpu_link_info: "GPU Link Info",
  pcie_gen: "PCIe Generation",
  max_link_gen: "Max",
  current_link_gen: "Current",
  device_current_link_gen: "Device Current",
  max_device_link_gen: "Device Max",
  max_host_link_gen: "Host Max",
  link_widths: "Link Width",
  max_link_width: "Max",
  current_link_width: "Current",
  pci_bridge_chip: "Bridge Chip",
  bridge_chip_type: "Type",
  bridge_chip_fw: "Firmware",
  replay_counter: "Replays Since Reset",
  replay_rollover_counter: "Replay Number Rollovers",
  tx_util: "Tx Throughput",
  rx_util: "Rx Throughput",
  atomic_caps_outbound: "Atomic Caps Outbound",
  atomic_caps_inbound: "Atomic Caps Inbound",
  fan_speed: "Fan Speed",
  performance_state: "Performance State",
  clocks_event_reasons: "Clocks Event Reasons",
  clocks_event_reason_gpu_idle: "Idle",
  clocks_event_reason_applications_clocks_setting: "Applications Clocks Setting",
  clocks_event_reason_sw_power_cap: "SW Power Cap",
  clocks_event_reason_hw_slowdown: "HW Slowdown",
  clocks_event_reason_hw_thermal_slowdown: "HW Thermal Slowdown",
  clocks_event_reason_hw_power_brake_slowdown: "HW Power Brake Slowdown",
  clocks_event_reason_sync_boost: "Sync Boost",
  clocks_event_reason_sw_thermal_slowdown: "SW Thermal Slowdown",
  clocks_event_reason_display_clocks_setting: "Display Clock Setting",
  clocks_event_reasons_counters: "Clocks Event Reasons Counters",
  clocks_event_reasons_counters_sw_power_cap: "SW Power Capping",
  clocks_event_reasons_counters_sync_boost: "Sync Boost",
  clocks_event_reasons_counters_sw_therm_slowdown: "SW Thermal Slowdown",
  clocks_event_reasons_counters_hw_therm_slowdown: "HW Thermal Slowdown",
  clocks_event_reasons_counters_hw_power_brake: "HW Power Braking",
  sparse_operation_mode: "Sparse Operation Mode",
  fb_memory_usage: "FB Memory Usage",
  bar1_memory_usage: "BAR1 Memory Usage",
  cc_protected_memory_usage: "Conf Compute Protected Memory Usage",
  total: "Total",
  reserved: "Reserved",
  used: "Used",
  free: "Free",
  compute_mode: "Compute Mode",
  utilization: "Utilization",
  gpu_util: "GPU",
  memory_util: "Memory",
  encoder_util: "Encoder",
  decoder_util: "Decoder",
  jpeg_util: "JPEG",
  ofa_util: "OFA",
  encoder_stats: "Encoder Stats",
  fbc_stats: "FBC Stats",
  session_count: "Active Sessions",
  average_fps: "Average FPS",
  average_latency: "Average Latency",
  dram_encryption_mode: "DRAM Encryption Mode",
  current_dram_encryption: "Current",
  pending_dram_encryption: "Pending",
  ecc_mode: "ECC Mode",
  current_ecc: "Current",
  pending_ecc: "Pending",
  ecc_errors: "ECC Errors",
  volatile: "Volatile",
  aggregate: "Aggregate",
  sram_correctable: "SRAM Correctable",
  sram_uncorrectable: "SRAM Uncorrectable",
  sram_uncorrectable_parity: "SRAM Uncorrectable Parity",
  sram_uncorrectable_secded: "SRAM Uncorrectable SEC-DED",
  dram_correctable: "DRAM Correctable",
  dram_uncorrectable: "DRAM Uncorrectable",
  sram_threshold_exceeded: "SRAM Threshold Exceeded",
  aggregate_uncorrectable_sram_sources: "Aggregate Uncorrectable SRAM Sources",
  sram_l2: "SRAM L2",
  sram_sm: "SRAM SM",
  sram_microcontroller: "SRAM Microcontroller",
  sram_pcie: "SRAM PCIE",
  sram_other: "SRAM Other",
  channel_repair_pending: "Channel Repair Pending",
  tpc_repair_pending: "TPC Repair Pending",
  unrepairable_memory: "Unrepairable Memory",
  retired_pages: "Retired Pages",
  multiple_single_bit_retirement: "Single Bit ECC",
  double_bit_retirement: "Double Bit ECC",
  retired_count: "Count",
  retired_pagelist: "Pages",
  pending_blacklist: "Pending Page Blacklist",
  pending_retirement: "Pending Page Retirement",
  remapped_rows: "Remapped Rows",
  remapped_row_corr: "Correctable Error",
  remapped_row_unc: "Uncorrectable Error",
  remapped_row_corr_inactive: "Correctable Error Inactive",
  remapped_row_unc_inactive: "Uncorrectable Error Inactive",
  remapped_row_pending: "Pending",
  remapped_row_failure: "Remapping Failure Occurred",
  row_remapper_histogram: "Bank Remap Availability Histogram",
  row_remapper_histogram_max: "Max",
  row_remapper_histogram_high: "High",
  row_remapper_histogram_partial: "Partial",
  row_remapper_histogram_low: "Low",
  row_remapper_histogram_none: "None",
  temperature: "Temperature",
  gpu_temp: "GPU Current Temp",
  gpu_temp_tlimit: "GPU T.Limit Temp",
  gpu_temp_max_tlimit_threshold: "GPU Shutdown T.Limit Temp",
  gpu_temp_slow_tlimit_threshold: "GPU Slowdown T.Limit Temp",
  gpu_temp_max_gpu_tlimit_threshold: "GPU Max Operating T.Limit Temp",
  gpu_temp_max_threshold: "GPU Shutdown Temp",
  gpu_temp_slow_threshold: "GPU Slowdown Temp",
  gpu_temp_max_gpu_threshold: "GPU Max Operating Temp",
  gpu_target_temperature: "GPU Target Temperature",
  memory_temp: "Memory Current Temp",
  gpu_temp_max_mem_tlimit_threshold: "Memory Max Operating T.Limit Temp",
  gpu_temp_max_mem_threshold: "Memory Max Operating Temp",
  supported_gpu_target_temp: "Supported GPU Target Temp",
  gpu_target_temp_min: "GPU Target Temp Min",
  gpu_target_temp_max: "GPU Target Temp Max",
  gpu_power_readings: "GPU Power Readings",
  gpu_memory_power_readings: "GPU Memory Power Readings",
  module_power_readings: "Module Power Readings",
  power_state: "Power State",
  power_draw: "Power Draw",
  average_power_draw: "Average Power Draw",
  instant_power_draw: "Instantaneous Power Draw",
  current_power_limit: "Current Power Limit",
  requested_power_limit: "Requested Power Limit",
  default_power_limit: "Default Power Limit",
  min_power_limit: "Min Power Limit",
  max_power_limit: "Max Power Limit",
  power_smoothing: "Power Smoothing",
  power_profiles: "Workload Power Profiles",
  power_profile_requested_profiles: "Requested Profiles",
  power_profile_enforced_profiles: "Enforced Profiles",
  edpp_multiplier: "EDPp Multiplier",
  clocks: "Clocks",
  applications_clocks: "Applications Clocks",
  default_applications_clocks: "Default Applications Clocks",
  deferred_clocks: "Deferred Clocks",
  max_clocks: "Max Clocks",
  max_customer_boost_clocks: "Max Customer Boost Clocks",
  graphics_clock: "Graphics",
  sm_clock: "SM",
  mem_clock: "Memory",
  video_clock: "Video",
  clock_policy: "Clock Policy",
  auto_boost: "Auto Boost",
  auto_boost_default: "Auto Boost Default",
  voltage: "Voltage",
  graphics_volt: "Graphics",
  fabric: "Fabric",
  state: "State",
  status: "Status",
  cliqueId: "CliqueId",
  clusterUuid: "ClusterUUID",
  health: "Health",
  summary: "Summary",
  bandwidth: "Bandwidth",
  route_recovery_in_progress: "Route Recovery in progress",
  route_unhealthy: "Route Unhealthy",
  access_timeout_recovery: "Access Timeout Recovery",
  incorrect_configuration: "Incorrect Configuration",
  partition_assigned: "Partition Assigned",
  capabilities: "Capabilities",
  egm: "EGM",
}

/** Inside a MIG device, memory sections are the instance's share. */
const migLabels: Readonly<Record<string, string>> = {
  fb_memory_usage: "Shared FB Memory Usage",
  bar1_memory_usage: "Shared BAR1 Memory",
}

/** Sections `-q` leaves out unless asked for with `-d`. */
const omitted = new Set(["supported_clocks", "accounted_processes"])

const leafPattern = /^\t*<(\w+)>(.*)<\/\1>$/
const openPattern = /^\t*<(\w+)(?: id="([^"]*)")?>$/
const closePattern = /^\t*<\/(\w+)>$/

/**
 * `nvidia-smi -q`: the same report as `-q -x` in the human layout, labels padded to the value column
 * (wider from driver 580 on), sub-sections indented by four spaces.
 */
export const textReport = (host: SimulatedHost, now: Date, gpus: ReadonlyArray<HostGpu>): string => {
  const xml = new ProcessOutput()
  xmlReport(host, now, xml, gpus)
  const width = isAtLeast(host.driver.version, "580") ? 55 : 42
  const lines = ["", "==============NVSMI LOG==============", ""]
  const path: string[] = []
  const row = (label: string, value: string) =>
    lines.push(`${`${" ".repeat(4 * (levelOf(path) - 1))}${label}`.padEnd(width)}: ${value}`)
  let skipping = 0
  for (const line of xml.toString().split("\n")) {
    const leaf = leafPattern.exec(line)
    if (leaf !== null) {
      const [, tag = "", value = ""] = leaf
      if (skipping > 0) continue
      if (tag === "attached_gpus") lines.push("")
      row(labelOf(tag, path), value)
      continue
    }
    const open = openPattern.exec(line)
    if (open !== null) {
      const [, tag = "", id = ""] = open
      path.push(tag)
      if (skipping > 0 || omitted.has(tag)) skipping++
      else if (tag === "gpu") lines.push(`GPU ${id}`)
      else if (tag !== "nvidia_smi_log" && tag !== "mig_devices" && tag !== "processes")
        lines.push(`${" ".repeat(4 * (levelOf(path) - 2))}${labelOf(tag, path)}`)
      continue
    }
    if (closePattern.test(line)) {
      const closed = path.pop()
      if (skipping > 0) skipping--
      else if (closed === "processes") row("Processes", "None")
      else if (closed === "gpu") lines.push("")
    }
  }
  return `${lines.join("\n")}\n`
}

/** Nesting level for indentation; `mig_devices` only groups its devices and adds none. */
const levelOf = (path: ReadonlyArray<string>): number => path.filter((tag) => tag !== "mig_devices").length

const labelOf = (tag: string, path: ReadonlyArray<string>): string =>
  (path.includes("mig_device") ? migLabels[tag] : undefined) ?? labels[tag] ?? tag
