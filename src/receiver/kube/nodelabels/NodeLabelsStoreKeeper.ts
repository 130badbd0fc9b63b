import type { KubeExecConfig } from "../KubeExecConfig.ts"

/** The name the inventory's `store` setting gives the store the node labeller writes. */
export const nodeLabelsStoreName = "node-labels"

/** Why a receiver config cannot keep the `node-labels` store; nothing when it can. */
export const keeperProblem = (config: KubeExecConfig): string | undefined =>
  config.nodeLabels.enabled
    ? undefined
    : `inventory store "${nodeLabelsStoreName}" is written by the node labeller: it needs node labels enabled (LABELS_ENABLED)`
