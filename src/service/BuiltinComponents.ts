import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ComponentFactory, CreateSettings } from "../component/Component.ts"
import type { ComponentStartError } from "../component/ComponentStartError.ts"
import type { Configured } from "../config/ComponentSettings.ts"
import type { Setting } from "../config/Setting.ts"
import * as HttpExporter from "../exporter/http/HttpExporter.ts"
import { natsSettings } from "../exporter/nats/NatsConfig.ts"
import { otlpSettings } from "../exporter/otlp/OtlpConfig.ts"
import { postgresSettings } from "../exporter/postgres/PostgresConfig.ts"
import * as StdoutExporter from "../exporter/stdout/StdoutExporter.ts"
import type { ExporterFactory } from "../pipeline/Exporter.ts"
import { exporterKeptStore, type StoreFactory } from "../pipeline/InventoryStore.ts"
import type { Elector, LeaseSettings } from "../pipeline/Leadership.ts"
import type { Processor } from "../pipeline/Processor.ts"
import type { Receiver } from "../pipeline/Receiver.ts"
import { factory as inventoryFactory } from "../processor/inventory/InventoryProcessor.ts"
import * as MemoryInventoryStore from "../processor/inventory/MemoryInventoryStore.ts"
import { kubeExecSettings } from "../receiver/kube/KubeExecConfig.ts"
import { nodeLabelsStore } from "../receiver/kube/nodelabels/NodeLabelsStoreKeeper.ts"
import { type ComponentFactories, ComponentRegistry } from "./ComponentRegistry.ts"
import { onDemand, onDemandElector, onDemandStore } from "./OnDemandFactory.ts"
import type { PipelineServices } from "./PipelineServices.ts"

/**
 * A receiver type of this build: it makes observations for the pipeline's processor, and may offer the
 * elector of the replicas that read the same source (`LEADER_ELECTION`).
 */
export type BuiltinReceiver = ComponentFactory<"receiver", unknown, Receiver, PipelineServices> &
  Configured<unknown> & {
    /**
     * A method, as `create` is, so a receiver of a concrete config type fits: the config it receives is
     * always the one its own settings built.
     */
    elector?(
      config: unknown,
      lease: LeaseSettings,
      settings: CreateSettings,
    ): Effect.Effect<Elector, ComponentStartError, Scope.Scope>
  }

/** A processor type of this build: it turns observations into events for the exporters. */
export type BuiltinProcessor = ComponentFactory<"processor", unknown, Processor, PipelineServices> &
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

/** The `kube_exec` receiver's implementation, which loads the Kubernetes client. */
const kubeExec = () => import("../receiver/kube/KubeExecFactory.ts").then((module) => module.factory)

/**
 * The components of this build. Those whose implementation imports a client library (Kubernetes,
 * OpenTelemetry, NATS, PostgreSQL) are listed on demand: their settings are here, their implementation is
 * imported when the service creates one, so the commands that only read the configuration start fast.
 */
export const builtinComponents: Distribution = {
  receivers: [
    {
      ...onDemand({ kind: "receiver", type: "kube_exec", settings: kubeExecSettings }, kubeExec),
      elector: onDemandElector(kubeExec),
    },
  ],
  processors: [inventoryFactory],
  exporters: [
    StdoutExporter.factory,
    onDemand({ kind: "exporter", type: "otlp", settings: otlpSettings }, () =>
      import("../exporter/otlp/OtlpExporter.ts").then((module) => module.factory),
    ),
    onDemand({ kind: "exporter", type: "nats", settings: natsSettings }, () =>
      import("../exporter/nats/NatsExporter.ts").then((module) => module.factory),
    ),
    HttpExporter.factory,
    onDemand({ kind: "exporter", type: "postgres", settings: postgresSettings }, () =>
      import("../exporter/postgres/PostgresExporter.ts").then((module) => module.factory),
    ),
  ],
  stores: [
    MemoryInventoryStore.storeFactory,
    onDemandStore(nodeLabelsStore, () =>
      import("../receiver/kube/nodelabels/NodeLabelsInventoryStore.ts").then((module) => module.storeFactory),
    ),
    onDemandStore(exporterKeptStore("nats"), () =>
      import("../exporter/nats/NatsKvInventoryStore.ts").then((module) => module.storeFactory),
    ),
    onDemandStore(exporterKeptStore("postgres"), () =>
      import("../exporter/postgres/PostgresInventoryStore.ts").then((module) => module.storeFactory),
    ),
  ],
}

/** The registry of the built-in factories. */
export const builtinRegistryLayer = ComponentRegistry.layer(builtinComponents)
