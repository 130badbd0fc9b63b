import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { NodeRef } from "../../domain/NodeObservation.ts"
import { labelsUnderPrefix } from "./nodelabels/GpuNodeLabels.ts"

const absentOr = <S extends Schema.Top>(schema: S) => Schema.optional(Schema.NullOr(schema))

const NodeFields = Schema.Struct({
  metadata: Schema.Struct({
    name: Schema.String,
    uid: absentOr(Schema.String),
    resourceVersion: absentOr(Schema.String),
    labels: absentOr(Schema.Record(Schema.String, Schema.String)),
  }),
  spec: absentOr(Schema.Struct({ providerID: absentOr(Schema.String) })),
})

const decodeNode = Schema.decodeUnknownOption(NodeFields)

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

const driverBranchOf = (labels: Readonly<Record<string, string>> | null | undefined): number | undefined => {
  for (const label of driverBranchLabels) {
    const branch = Number(labels?.[label])
    if (Number.isInteger(branch) && branch > 0) return branch
  }
  return undefined
}

/**
 * Reads a node from a list or a watch event, keeping its labels under `labelPrefix` when one is given;
 * `undefined` when the object is not a node.
 */
export const clusterNodeOf = (object: unknown, labelPrefix?: string): ClusterNode | undefined => {
  const decoded = decodeNode(object)
  if (Option.isNone(decoded)) {
    return undefined
  }
  const { metadata, spec } = decoded.value
  const driverBranch = driverBranchOf(metadata.labels)
  const labels = labelPrefix === undefined ? {} : labelsUnderPrefix(labelPrefix, metadata.labels)
  return {
    key: metadata.name,
    uid: metadata.uid ?? "",
    providerId: spec?.providerID ?? "",
    resourceVersion: metadata.resourceVersion ?? "",
    ...(driverBranch === undefined ? {} : { driverBranch }),
    ...(Object.keys(labels).length === 0 ? {} : { labels }),
  }
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
