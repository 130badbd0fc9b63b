import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { KnownGpu } from "../../../domain/KnownGpu.ts"
import { machineIdentity } from "../../../domain/ProviderId.ts"
import type { KubeApi } from "../../../kubeclient/rest/KubeApi.ts"
import { InventoryStore, InventoryStoreError, type StoreFactory } from "../../../pipeline/InventoryStore.ts"
import { type ClusterNode, clusterNodeOf } from "../ClusterNode.ts"
import type { KubeExecConfig } from "../KubeExecConfig.ts"
import { receiverKubeApi } from "../ReceiverKubeApi.ts"
import { gpusOfLabels } from "./GpuNodeLabels.ts"
import { nodeLabelsStore, nodeLabelsStoreName } from "./NodeLabelsStoreKeeper.ts"

/** Nodes per list page when the store is read. */
const pageSize = 500

/** The GPUs one node's labels describe, as the inventory knows GPUs, seen at `now`. */
const knownGpusOfNode = (node: ClusterNode, prefix: string, namespace: string, now: Date): ReadonlyArray<KnownGpu> => {
  const gpus = gpusOfLabels(prefix, node.labels)
  const serials = gpus.flatMap((gpu) => (gpu.serial === undefined ? [] : [gpu.serial]))
  const providerId = node.providerId.trim() === "" ? undefined : node.providerId
  return gpus.map((gpu) => ({
    uuid: gpu.uuid,
    node: node.key,
    ...(node.uid === "" ? {} : { nodeUid: node.uid }),
    ...(providerId === undefined ? {} : { providerId }),
    machine: machineIdentity(providerId).machine,
    // Labels do not name the device-plugin pod; the next reading of the node does.
    pod: { namespace, name: "" },
    gpu: {
      index: gpu.index,
      uuid: gpu.uuid,
      ...(gpu.serial === undefined ? {} : { serial: gpu.serial }),
      ...(gpu.chassis === "" ? {} : { platform: { chassisSerial: gpu.chassis } }),
    },
    serialShared: gpu.serial !== undefined && serials.filter((serial) => serial === gpu.serial).length > 1,
    firstSeen: now,
    lastSeen: now,
    lastReported: now,
  }))
}

/**
 * The `node-labels` inventory store: the node labels the receiver's labeller writes (see `NodeLabeller`)
 * read back at start, so a restart without another durable store announces nothing as `added` for GPUs
 * the labels already describe. `load` lists every node (in pages, each under the API client's deadline)
 * and turns the labels under the prefix into GPUs: UUID, index, serial, chassis, node and machine, no
 * more (product, PCI bus, driver, first seen are learnt again from the next reading). `apply` writes
 * nothing: the labeller keeps the labels equal to the inventory, so node labels must be enabled.
 */
export const make = (api: KubeApi["Service"], config: Pick<KubeExecConfig, "namespace" | "nodeLabels">) =>
  InventoryStore.of({
    kind: nodeLabelsStoreName,
    load: Effect.gen(function* () {
      const now = new Date(yield* Clock.currentTimeMillis)
      const known: Array<KnownGpu> = []
      let continueToken: string | undefined
      do {
        const page = yield* api.listNodes({
          limit: pageSize,
          ...(continueToken === undefined ? {} : { continueToken }),
        })
        for (const item of page.items) {
          const node = clusterNodeOf(item, config.nodeLabels.prefix)
          if (node !== undefined) known.push(...knownGpusOfNode(node, config.nodeLabels.prefix, config.namespace, now))
        }
        continueToken = page.continueToken
      } while (continueToken !== undefined)
      return known
    }).pipe(
      Effect.mapError(
        (error) =>
          new InventoryStoreError({
            store: nodeLabelsStoreName,
            operation: "load",
            message: error.message,
            conflict: false,
          }),
      ),
    ),
    apply: () => Effect.void,
  })

/** The `node-labels` store, kept by the pipeline's `kube_exec` receiver: it reads the cluster that receiver reads. */
export const storeFactory: StoreFactory = {
  ...nodeLabelsStore,
  create: (receiverConfig, settings) =>
    Effect.gen(function* () {
      const config = receiverConfig as KubeExecConfig
      return make(yield* receiverKubeApi(config, settings.id), config)
    }),
}
