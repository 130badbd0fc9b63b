import type { AttributeValue } from "@opentelemetry/api"
import type { GpuHealth } from "../../domain/GpuHealth.ts"
import type { GpuRecord } from "../../domain/GpuRecord.ts"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"

type Attributes = Record<string, AttributeValue>

const putText = (attributes: Attributes, key: string, value: string | undefined): void => {
  if (value !== undefined && value !== "") attributes[key] = value
}

/**
 * What describes a GPU itself, whatever the event: the hardware semantic conventions (`hw.*`, its UUID
 * aside) and NVIDIA extras (`nvidia.gpu.*`). Absent values are left out.
 */
export const gpuDescription = (record: GpuRecord): Attributes => {
  const attributes: Attributes = { "hw.type": "gpu", "hw.vendor": "NVIDIA" }
  putText(attributes, "hw.model", record.product)
  putText(attributes, "hw.serial_number", record.gpu)
  putText(attributes, "hw.parent", record.chassis)
  attributes["nvidia.gpu.index"] = record.index
  if (record.moduleId !== undefined) attributes["nvidia.gpu.module_id"] = record.moduleId
  putText(attributes, "nvidia.gpu.pci_bus_id", record.pciBusId)
  putText(attributes, "nvidia.gpu.mig_mode", record.migMode)
  putText(attributes, "nvidia.gpu.driver_version", record.driverVersion)
  putText(attributes, "nvidia.gpu.cuda_version", record.cudaVersion)
  attributes["nvidia.gpu.serial_shared"] = record.serialShared
  putText(attributes, "nvidia.gpu.health.state", record.health?.state)
  return attributes
}

const snakeCase = (key: string): string => key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

/** Each signal of a GPU's health as `nvidia.gpu.health.<path>` in snake case (`…remapped_rows.pending`). */
const putSignals = (attributes: Attributes, prefix: string, signals: object): void => {
  for (const [key, value] of Object.entries(signals)) {
    const name = `${prefix}.${snakeCase(key)}`
    if (typeof value === "number" || typeof value === "boolean" || typeof value === "string") attributes[name] = value
    else if (Array.isArray(value)) attributes[name] = value.map(String)
    else if (typeof value === "object" && value !== null) putSignals(attributes, name, value)
  }
}

/**
 * A GPU's health as attributes: the state (in the description), the reasons as a string array, whether it
 * is RMA-eligible, and every signal it reported flattened; for a `health` event, the state before.
 */
const putHealth = (attributes: Attributes, health: GpuHealth, previousState: string | undefined): void => {
  const { state: _state, reasons, rmaEligible, ...signals } = health
  attributes["nvidia.gpu.health.reasons"] = [...reasons]
  attributes["nvidia.gpu.health.rma_eligible"] = rmaEligible
  putSignals(attributes, "nvidia.gpu.health", signals)
  putText(attributes, "nvidia.gpu.health.previous_state", previousState)
}

/**
 * The record attributes of one GPU event: its UUID (`hw.id`), its description, the device-plugin pod it
 * was read in (`k8s.pod.name`, `k8s.namespace.name`), the event's id, for `moved` where the GPU was
 * before, and its health (`nvidia.gpu.health.*`). Absent values are left out.
 */
export const gpuLogAttributes = (event: InventoryEvent): Attributes => {
  const { record, origin } = event
  const attributes: Attributes = { "hw.id": record.uuid, ...gpuDescription(record) }
  putText(attributes, "k8s.pod.name", origin.podName)
  putText(attributes, "k8s.namespace.name", origin.podNamespace)
  putText(attributes, "gpu_serials.event.id", record.id)
  putText(attributes, "gpu_serials.previous.k8s.cluster.name", record.previousCluster)
  putText(attributes, "gpu_serials.previous.k8s.node.name", record.previousNode)
  putText(attributes, "gpu_serials.previous.host.id", record.previousMachine)
  if (record.health !== undefined) putHealth(attributes, record.health, record.previousHealthState)
  return attributes
}
