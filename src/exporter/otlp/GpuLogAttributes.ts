import type { AttributeValue } from "@opentelemetry/api"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"

/**
 * The record attributes of one GPU event: the hardware semantic conventions (`hw.*`), the
 * device-plugin pod it was read in (`k8s.pod.name`, `k8s.namespace.name`), NVIDIA extras
 * (`nvidia.gpu.*`) and, for `moved`, where the GPU was before. Absent values are left out.
 */
export const gpuLogAttributes = (event: InventoryEvent): Record<string, AttributeValue> => {
  const { record, origin } = event
  const attributes: Record<string, AttributeValue> = {
    "hw.id": record.uuid,
    "hw.type": "gpu",
    "hw.vendor": "NVIDIA",
  }
  const text = (key: string, value: string | undefined) => {
    if (value !== undefined && value !== "") attributes[key] = value
  }
  text("hw.model", record.product)
  text("hw.serial_number", record.gpu)
  text("hw.parent", record.chassis)
  text("k8s.pod.name", origin.podName)
  text("k8s.namespace.name", origin.podNamespace)
  attributes["nvidia.gpu.index"] = record.index
  if (record.moduleId !== undefined) attributes["nvidia.gpu.module_id"] = record.moduleId
  text("nvidia.gpu.pci_bus_id", record.pciBusId)
  text("nvidia.gpu.mig_mode", record.migMode)
  text("nvidia.gpu.driver_version", record.driverVersion)
  text("nvidia.gpu.cuda_version", record.cudaVersion)
  attributes["nvidia.gpu.serial_shared"] = record.serialShared
  text("gpu_serials.event.id", record.id)
  text("gpu_serials.previous.k8s.node.name", record.previousNode)
  text("gpu_serials.previous.host.id", record.previousMachine)
  return attributes
}
