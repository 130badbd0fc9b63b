// The library API of gpu-serials: what a third-party exporter or an embedding program needs.

export { parseServiceFlags } from "./cli/ServiceFlags.ts"
export type { ComponentFactory, ComponentKind, ConfigProblem, CreateSettings, Health } from "./component/Component.ts"
export { ComponentStartError } from "./component/ComponentStartError.ts"
export { type ComponentSettings, type Configured, configuredBy, decodeSection } from "./config/ComponentSettings.ts"
export type { SettingRule, SettingValues } from "./config/ResolveSettings.ts"
export type { Setting } from "./config/Setting.ts"
export * as SettingType from "./config/SettingType.ts"
export type { Gpu, GpuPlatform } from "./domain/Gpu.ts"
export {
  type ClockEvent,
  clockEvents,
  type GpuHealth,
  type GpuHealthSignals,
  type HealthState,
  healthStates,
} from "./domain/GpuHealth.ts"
export { type GpuRecord, recordSchema } from "./domain/GpuRecord.ts"
export { gpuRecord, type ReadingContext, readingRecords } from "./domain/GpuRecordBuilder.ts"
export {
  defaultHealthThresholds,
  type HealthContext,
  type HealthReason,
  type HealthThresholds,
  healthReasons,
  healthVerdict,
} from "./domain/HealthVerdict.ts"
export type { EventOrigin, InventoryEvent } from "./domain/InventoryEvent.ts"
export { type InventoryEventKind, inventoryEventKinds } from "./domain/InventoryEventKind.ts"
export type { NodeObservation } from "./domain/NodeObservation.ts"
export type { GpuFailure, NodeReading } from "./domain/NodeReading.ts"
export { type MachineIdentity, machineIdentity } from "./domain/ProviderId.ts"
export * as QueuedExporter from "./exporter/exporterhelper/QueuedExporter.ts"
export {
  defaultQueueSettings,
  type QueueSettings,
  queueSettingList,
  queueSettingsOf,
  queueSettingsRule,
} from "./exporter/exporterhelper/QueueSettings.ts"
export { type Sink, SinkError } from "./exporter/exporterhelper/Sink.ts"
export { recordJson } from "./exporter/RecordJson.ts"
export { parseCsvReading } from "./nvsmi/CsvReadingParser.ts"
export { type NvsmiError, type NvsmiErrorKind, nvsmiErrorKinds } from "./nvsmi/NvsmiError.ts"
export { parseNvsmiOutput } from "./nvsmi/NvsmiOutput.ts"
export { parseXmlReading, XmlReadingParser } from "./nvsmi/XmlReadingParser.ts"
export type { Exporter, ExporterFactory, ExporterStats } from "./pipeline/Exporter.ts"
export { builtinComponents, builtinRegistryLayer } from "./service/BuiltinComponents.ts"
export { ComponentRegistry } from "./service/ComponentRegistry.ts"
export { runGpuSerialsService } from "./service/GpuSerialsService.ts"
export { type LoadedServiceConfig, loadPipelineConfig, type PipelineSources } from "./service/PipelineConfig.ts"
