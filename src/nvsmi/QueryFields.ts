/** The `--query-gpu` fields gpu-serials asks for, in the order of the CSV columns nvidia-smi prints. */
export const gpuQueryFields = [
  "index",
  "uuid",
  "serial",
  "name",
  "pci.bus_id",
  "mig.mode.current",
  "driver_version",
  "platform.chassis_serial_number",
  "platform.slot_number",
  "platform.tray_index",
  "platform.host_id",
  "platform.peer_type",
  "platform.module_id",
  "platform.gpu_fabric_guid",
] as const
