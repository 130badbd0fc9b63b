import type { ComponentFactory } from "../component/Component.ts"
import type { Configured } from "../config/ComponentSettings.ts"
import type { Setting } from "../config/Setting.ts"
import * as HttpExporter from "../exporter/http/HttpExporter.ts"
import * as NatsExporter from "../exporter/nats/NatsExporter.ts"
import * as NatsKvInventoryStore from "../exporter/nats/NatsKvInventoryStore.ts"
import * as OtlpExporter from "../exporter/otlp/OtlpExporter.ts"
import * as PostgresExporter from "../exporter/postgres/PostgresExporter.ts"
import * as PostgresInventoryStore from "../exporter/postgres/PostgresInventoryStore.ts"
import * as StdoutExporter from "../exporter/stdout/StdoutExporter.ts"
import { type ComponentFactories, ComponentRegistry } from "../pipeline/ComponentRegistry.ts"
import type { ExporterFactory } from "../pipeline/Exporter.ts"
import type { ElectorFactory } from "../pipeline/Leadership.ts"
import type { Processor } from "../pipeline/Processor.ts"
import type { Receiver } from "../pipeline/Receiver.ts"
import { factory as inventoryFactory } from "../processor/inventory/InventoryProcessor.ts"
import type { StoreFactory } from "../processor/inventory/InventoryStore.ts"
import * as MemoryInventoryStore from "../processor/inventory/MemoryInventoryStore.ts"
import { factory as kubeExecFactory } from "../receiver/kube/KubeExecFactory.ts"
import * as NodeLabelsInventoryStore from "../receiver/kube/NodeLabelsInventoryStore.ts"
import type { PipelineServices } from "./PipelineServices.ts"

/**
 * A receiver type of this build: it makes observations for the pipeline's processor, and may offer the
 * elector of the replicas that read the same source (`LEADER_ELECTION`).
 */
// biome-ignore lint/suspicious/noExplicitAny: each factory takes the config its own settings build.
export type BuiltinReceiver = ComponentFactory<"receiver", any, Receiver, PipelineServices> &
  Configured<unknown> & {
    // biome-ignore lint/suspicious/noExplicitAny: the elector takes the config the receiver's settings build.
    readonly elector?: ElectorFactory<any>
  }

/** A processor type of this build: it turns observations into events for the exporters. */
// biome-ignore lint/suspicious/noExplicitAny: each factory takes the config its own settings build.
export type BuiltinProcessor = ComponentFactory<"processor", any, Processor, PipelineServices> &
  Configured<unknown> & {
    /** The setting that names the store the processor keeps its state in, checked against the pipeline. */
    readonly storeSetting?: Setting<string>
  }

/** An exporter type of this build. */
export type BuiltinExporter = ExporterFactory & Configured<unknown>

/** The components of this distribution, as the Collector's `components()`; third-party exporters are loaded from the config. */
export interface Distribution extends ComponentFactories {
  readonly receivers: ReadonlyArray<BuiltinReceiver>
  readonly processors: ReadonlyArray<BuiltinProcessor>
  readonly exporters: ReadonlyArray<BuiltinExporter>
  /** The stores the inventory's `store` setting can name. */
  readonly stores: ReadonlyArray<StoreFactory>
}

export const builtinComponents: Distribution = {
  receivers: [kubeExecFactory],
  processors: [inventoryFactory],
  exporters: [
    StdoutExporter.factory,
    OtlpExporter.factory,
    NatsExporter.factory,
    HttpExporter.factory,
    PostgresExporter.factory,
  ],
  stores: [
    MemoryInventoryStore.storeFactory,
    NodeLabelsInventoryStore.storeFactory,
    NatsKvInventoryStore.storeFactory,
    PostgresInventoryStore.storeFactory,
  ],
}

/** The registry of the built-in factories. */
export const builtinRegistryLayer = ComponentRegistry.layer(builtinComponents)
