// service/ is the wiring, as the Collector's otelcol and service: it knows factories, and the components
// know nothing of it.
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ComponentFactory, CreateSettings } from "../component/Component.ts"
import type { ComponentStartError } from "../component/ComponentStartError.ts"
import type { Configured } from "../config/ComponentSettings.ts"
import type { Setting } from "../config/Setting.ts"
import type { ExporterFactory } from "../pipeline/Exporter.ts"
import type { StoreFactory } from "../pipeline/InventoryStore.ts"
import type { Elector, LeaseSettings } from "../pipeline/Leadership.ts"
import type { ObservationKind } from "../pipeline/ObservationKind.ts"
import type { Processor } from "../pipeline/Processor.ts"
import type { Receiver } from "../pipeline/Receiver.ts"
import type { PipelineServices } from "./PipelineServices.ts"

/**
 * A receiver type of this build: it makes observations for the pipeline's processor, and may offer the
 * elector of the replicas that read the same source (`LEADER_ELECTION`).
 */
export type BuiltinReceiver = ComponentFactory<"receiver", unknown, Receiver<unknown>, PipelineServices> &
  Configured<unknown> & {
    /** What it observes; `node` when absent. The config pairs it only with a processor that takes the same. */
    readonly observes?: ObservationKind
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
export type BuiltinProcessor = ComponentFactory<"processor", unknown, Processor<unknown>, PipelineServices> &
  Configured<unknown> & {
    /** What it takes; `node` when absent. */
    readonly observes?: ObservationKind
    /** The setting that names the store the processor keeps its state in, checked against the pipeline. */
    readonly storeSetting?: Setting<string>
  }

/** An exporter type of this build. */
export type BuiltinExporter = ExporterFactory & Configured<unknown>

/** The components of a distribution, as the Collector's `components()`; third-party exporters are loaded from the config. */
export interface Distribution extends ComponentFactories {
  readonly receivers: ReadonlyArray<BuiltinReceiver>
  readonly processors: ReadonlyArray<BuiltinProcessor>
  readonly exporters: ReadonlyArray<BuiltinExporter>
  /** The stores the inventory's `store` setting can name. */
  readonly stores: ReadonlyArray<StoreFactory>
}

/** Some of a distribution's components, as a registry is made of them (the built-in ones, or a test's). */
export interface ComponentFactories {
  readonly receivers?: ReadonlyArray<BuiltinReceiver>
  readonly processors?: ReadonlyArray<BuiltinProcessor>
  /** Built-in or third-party: an exporter's section is validated by its own factory. */
  readonly exporters?: ReadonlyArray<ExporterFactory>
  readonly stores?: ReadonlyArray<StoreFactory>
}
