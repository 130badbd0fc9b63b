import type { NodeRef } from "../../domain/NodeObservation.ts"
import { invalid, objectField, stringField, stringMapField } from "./ObjectFields.ts"

/**
 * What the node informer keeps of a node: its identity and the labels under the node-label prefix,
 * nothing else (10,000 nodes stay small).
 */
export interface ClusterNode {
  /** The node name, the cache key. */
  readonly key: string
  readonly uid: string
  /** `spec.providerID`; empty on bare-metal nodes registered without a cloud provider. */
  readonly providerId: string
  readonly resourceVersion: string
  /** The NVIDIA driver branch GPU Feature Discovery labels the node with, when it does. */
  readonly driverBranch?: number
  /** The node's labels under the node-label prefix, when the informer keeps them and there are any. */
  readonly labels?: Readonly<Record<string, string>>
}

/** GPU Feature Discovery's label of the driver's major version, in its older and newer spelling. */
const driverBranchLabels = ["nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver-version.major"]

const driverBranchOf = (labels: Readonly<Record<string, string>> | undefined): number | undefined => {
  for (const label of driverBranchLabels) {
    const branch = Number(labels?.[label])
    if (Number.isInteger(branch) && branch > 0) return branch
  }
  return undefined
}

/**
 * Reads a node from a list or a watch event, keeping its labels under `labelPrefix` when one is given;
 * `undefined` when the object is not a node (no name, or a kept field of the wrong type).
 */
export const clusterNodeOf = (object: unknown, labelPrefix?: string): ClusterNode | undefined => {
  const node = objectField(object)
  if (node === undefined || node === invalid) return undefined
  const metadata = objectField(node.metadata)
  if (metadata === undefined || metadata === invalid || typeof metadata.name !== "string") return undefined
  const uid = stringField(metadata.uid)
  const resourceVersion = stringField(metadata.resourceVersion)
  const labels = stringMapField(metadata.labels)
  const spec = objectField(node.spec)
  const providerId = spec === undefined || spec === invalid ? spec : stringField(spec.providerID)
  if (uid === invalid || resourceVersion === invalid || labels === invalid || providerId === invalid) return undefined
  const driverBranch = driverBranchOf(labels)
  const under = labelPrefix === undefined ? undefined : labelsUnder(`${labelPrefix}/`, labels)
  return {
    key: metadata.name,
    uid: uid ?? "",
    providerId: providerId ?? "",
    resourceVersion: resourceVersion ?? "",
    ...(driverBranch === undefined ? {} : { driverBranch }),
    ...(under === undefined ? {} : { labels: under }),
  }
}

/** The labels whose key starts with `start` (`<prefix>/`); `undefined` when there is none. */
const labelsUnder = (
  start: string,
  labels: Readonly<Record<string, string>> | undefined,
): Readonly<Record<string, string>> | undefined => {
  let under: Record<string, string> | undefined
  for (const key in labels) {
    if (key.startsWith(start)) {
      under ??= {}
      under[key] = labels[key] as string
    }
  }
  return under
}

/** The node as observations name it; a node the informer does not know is named only. */
export const nodeRefOf = (name: string, node: ClusterNode | undefined): NodeRef => {
  if (node === undefined) {
    return { name }
  }
  return {
    name,
    ...(node.uid === "" ? {} : { uid: node.uid }),
    ...(node.providerId === "" ? {} : { providerId: node.providerId }),
  }
}
