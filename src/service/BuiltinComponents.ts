import { type ComponentFactories, ComponentRegistry } from "../component/ComponentRegistry.ts"
import * as NatsExporter from "../exporter/nats/NatsExporter.ts"
import * as OtlpExporter from "../exporter/otlp/OtlpExporter.ts"
import * as StdoutExporter from "../exporter/stdout/StdoutExporter.ts"
import { factory as inventoryFactory } from "../processor/inventory/InventoryProcessor.ts"
import { factory as kubeExecFactory } from "../receiver/kube/KubeExecFactory.ts"

/** The factories this distribution ships; third-party exporters are loaded from the config. */
export const builtinComponents: ComponentFactories = {
  receivers: [kubeExecFactory],
  processors: [inventoryFactory],
  exporters: [StdoutExporter.factory, OtlpExporter.factory, NatsExporter.factory],
}

/** The registry of the built-in factories. */
export const builtinRegistryLayer = ComponentRegistry.layer(builtinComponents)
