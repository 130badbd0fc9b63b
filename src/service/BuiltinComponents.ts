import * as HttpExporter from "../exporter/http/HttpExporter.ts"
import { natsSettings } from "../exporter/nats/NatsConfig.ts"
import { otlpSettings } from "../exporter/otlp/OtlpConfig.ts"
import { postgresSettings } from "../exporter/postgres/PostgresConfig.ts"
import * as StdoutExporter from "../exporter/stdout/StdoutExporter.ts"
import { exporterKeptStore } from "../pipeline/InventoryStore.ts"
import { factory as fleetFactory } from "../processor/fleet/FleetProcessor.ts"
import { factory as inventoryFactory } from "../processor/inventory/InventoryProcessor.ts"
import * as MemoryInventoryStore from "../processor/inventory/MemoryInventoryStore.ts"
import { kubeExecSettings } from "../receiver/kube/KubeExecConfig.ts"
import { nodeLabelsStore } from "../receiver/kube/nodelabels/NodeLabelsStoreKeeper.ts"
import { hubNatsSettings } from "../receiver/nats/HubNatsConfig.ts"
import { ComponentRegistry } from "./ComponentRegistry.ts"
import type { Distribution } from "./Distribution.ts"
import { onDemand, onDemandElector, onDemandStore } from "./OnDemandFactory.ts"

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
    {
      // A hub's receiver: the hub stream that sources every cluster's; it pairs with the fleet processor.
      ...onDemand({ kind: "receiver", type: "nats", settings: hubNatsSettings }, () =>
        import("../receiver/nats/HubNatsReceiver.ts").then((module) => module.factory),
      ),
      observes: "cluster",
    },
  ],
  processors: [inventoryFactory, fleetFactory],
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
