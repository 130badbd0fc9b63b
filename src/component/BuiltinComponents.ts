import * as StdoutExporter from "../exporter/stdout/StdoutExporter.ts"
import { type ComponentFactories, ComponentRegistry } from "./ComponentRegistry.ts"

/** The factories this distribution ships; third-party exporters are loaded from the config. */
export const builtinComponents: ComponentFactories = {
  exporters: [StdoutExporter.factory],
}

/** The registry of the built-in factories. */
export const builtinRegistryLayer = ComponentRegistry.layer(builtinComponents)
