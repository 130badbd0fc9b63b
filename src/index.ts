// The library API of gpu-serials: what a third-party exporter or an embedding program needs.

export { builtinComponents } from "./component/BuiltinComponents.ts"
export type { ComponentFactory, ComponentKind, ConfigProblem, CreateSettings, Health } from "./component/Component.ts"
export { ComponentStartError } from "./component/ComponentStartError.ts"
export type { Gpu, GpuPlatform } from "./domain/Gpu.ts"
export { type GpuRecord, recordSchema } from "./domain/GpuRecord.ts"
export { gpuRecord, type ReadingContext, readingRecords } from "./domain/GpuRecordBuilder.ts"
export {
  type EventOrigin,
  type InventoryEvent,
  type InventoryEventKind,
  inventoryEventKinds,
} from "./domain/InventoryEvent.ts"
export type { NodeObservation } from "./domain/NodeObservation.ts"
export type { GpuFailure, NodeReading } from "./domain/NodeReading.ts"
export { type MachineIdentity, machineIdentity } from "./domain/ProviderId.ts"
export type { Exporter, ExporterFactory, ExporterStats } from "./exporter/Exporter.ts"
export * as QueuedExporter from "./exporter/QueuedExporter.ts"
export { defaultQueueSettings, type QueueSettings, queueSettingsFields } from "./exporter/QueueSettings.ts"
export { recordJson } from "./exporter/RecordJson.ts"
export { type Sink, SinkError } from "./exporter/Sink.ts"
export { parseCsvReading } from "./nvsmi/CsvReadingParser.ts"
export { type NvsmiError, type NvsmiErrorKind, nvsmiErrorKinds } from "./nvsmi/NvsmiError.ts"
export { parseNvsmiOutput } from "./nvsmi/NvsmiOutput.ts"
export { parseXmlReading, XmlReadingParser } from "./nvsmi/XmlReadingParser.ts"
