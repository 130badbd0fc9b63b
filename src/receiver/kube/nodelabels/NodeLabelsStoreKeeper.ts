import { receiverKeptStore, type StoreDeclaration } from "../../../pipeline/InventoryStore.ts"
import type { KubeExecConfig } from "../KubeExecConfig.ts"

/** The name the inventory's `store` setting gives the store the node labeller writes. */
export const nodeLabelsStoreName = "node-labels"

/** Why a receiver config cannot keep the `node-labels` store; nothing when it can. */
export const keeperProblem = (config: KubeExecConfig): string | undefined =>
  config.nodeLabels.enabled
    ? undefined
    : `inventory store "${nodeLabelsStoreName}" is written by the node labeller: it needs node labels enabled (LABELS_ENABLED)`

/** The `node-labels` store, kept by the pipeline's `kube_exec` receiver: it reads the cluster that receiver reads. */
export const nodeLabelsStore: StoreDeclaration = receiverKeptStore(nodeLabelsStoreName, "kube_exec", (config) =>
  // The service passes the config the `kube_exec` receiver's own settings built.
  keeperProblem(config as KubeExecConfig),
)
