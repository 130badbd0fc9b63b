import type { FieldReader } from "./FieldSelector.ts"
import { isJsonObject, type JsonObject, type JsonValue } from "./Json.ts"

/** One REST resource the API server serves, with what discovery and selectors need to know of it. */
export interface ResourceKind {
  /** Plural resource name in URLs: `pods`. */
  readonly resource: string
  readonly singular: string
  readonly kind: string
  readonly listKind: string
  /** API group; empty for the core group. */
  readonly group: string
  readonly version: string
  readonly namespaced: boolean
  readonly shortNames: ReadonlyArray<string>
  readonly categories: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
  readonly subresources: ReadonlyArray<{
    readonly name: string
    readonly kind: string
    readonly verbs: ReadonlyArray<string>
  }>
  /** Field-selector labels this resource supports beyond `metadata.name` and `metadata.namespace`. */
  readonly fields: Readonly<Record<string, FieldReader>>
  /**
   * For a resource also served in an older version: turns a stored object (a fresh copy, which it may
   * change) into this version's shape. Absent for the version objects are stored in.
   */
  readonly convert?: (object: JsonObject) => JsonObject
}

export const apiVersionOf = (kind: ResourceKind): string =>
  kind.group === "" ? kind.version : `${kind.group}/${kind.version}`

const fieldAt =
  (...path: string[]): FieldReader =>
  (object) => {
    let cursor: JsonValue | undefined = object
    for (const segment of path) {
      if (!isJsonObject(cursor)) return ""
      cursor = cursor[segment]
    }
    return typeof cursor === "string" ? cursor : cursor === undefined || cursor === null ? "" : String(cursor)
  }

const metadataFields = {
  "metadata.name": fieldAt("metadata", "name"),
  "metadata.namespace": fieldAt("metadata", "namespace"),
}

const readWriteVerbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

export const pods: ResourceKind = {
  resource: "pods",
  singular: "pod",
  kind: "Pod",
  listKind: "PodList",
  group: "",
  version: "v1",
  namespaced: true,
  shortNames: ["po"],
  categories: ["all"],
  verbs: readWriteVerbs,
  subresources: [
    { name: "exec", kind: "PodExecOptions", verbs: ["create", "get"] },
    { name: "status", kind: "Pod", verbs: ["get", "patch", "update"] },
  ],
  fields: {
    ...metadataFields,
    "spec.nodeName": fieldAt("spec", "nodeName"),
    "spec.restartPolicy": fieldAt("spec", "restartPolicy"),
    "spec.schedulerName": fieldAt("spec", "schedulerName"),
    "spec.serviceAccountName": fieldAt("spec", "serviceAccountName"),
    "status.phase": fieldAt("status", "phase"),
    "status.podIP": fieldAt("status", "podIP"),
    "status.nominatedNodeName": fieldAt("status", "nominatedNodeName"),
  },
}

export const nodes: ResourceKind = {
  resource: "nodes",
  singular: "node",
  kind: "Node",
  listKind: "NodeList",
  group: "",
  version: "v1",
  namespaced: false,
  shortNames: ["no"],
  categories: [],
  verbs: readWriteVerbs,
  subresources: [{ name: "status", kind: "Node", verbs: ["get", "patch", "update"] }],
  fields: { ...metadataFields, "spec.unschedulable": fieldAt("spec", "unschedulable") },
}

export const namespaces: ResourceKind = {
  resource: "namespaces",
  singular: "namespace",
  kind: "Namespace",
  listKind: "NamespaceList",
  group: "",
  version: "v1",
  namespaced: false,
  shortNames: ["ns"],
  categories: [],
  verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
  subresources: [],
  fields: { ...metadataFields, "status.phase": fieldAt("status", "phase") },
}

export const leases: ResourceKind = {
  resource: "leases",
  singular: "lease",
  kind: "Lease",
  listKind: "LeaseList",
  group: "coordination.k8s.io",
  version: "v1",
  namespaced: true,
  shortNames: [],
  categories: [],
  verbs: readWriteVerbs,
  subresources: [],
  fields: metadataFields,
}

/**
 * `resource.k8s.io/v1` ResourceSlices, cluster-scoped, with the field labels the API server indexes
 * (`ResourceSliceSelector*`): DRA drivers publish their devices in them.
 */
export const resourceSlices: ResourceKind = {
  resource: "resourceslices",
  singular: "resourceslice",
  kind: "ResourceSlice",
  listKind: "ResourceSliceList",
  group: "resource.k8s.io",
  version: "v1",
  namespaced: false,
  shortNames: [],
  categories: [],
  verbs: readWriteVerbs,
  subresources: [],
  fields: {
    ...metadataFields,
    "spec.driver": fieldAt("spec", "driver"),
    "spec.nodeName": fieldAt("spec", "nodeName"),
    "spec.pool.name": fieldAt("spec", "pool", "name"),
  },
}

/** `resource.k8s.io/v1beta2` (Kubernetes 1.33): the same shape as v1. */
export const resourceSlicesV1beta2: ResourceKind = {
  ...resourceSlices,
  version: "v1beta2",
  convert: (object) => ({ ...object, apiVersion: "resource.k8s.io/v1beta2" }),
}

/** `resource.k8s.io/v1beta1` (Kubernetes 1.32): each device's attributes and capacity sit under `basic`. */
export const resourceSlicesV1beta1: ResourceKind = {
  ...resourceSlices,
  version: "v1beta1",
  convert: (object) => {
    const spec = object.spec
    if (isJsonObject(spec) && Array.isArray(spec.devices))
      spec.devices = spec.devices.map((device) => {
        if (!isJsonObject(device)) return device
        const { name, ...basic } = device
        return { name: name ?? "", basic }
      })
    return { ...object, apiVersion: "resource.k8s.io/v1beta1" }
  },
}

/** The versions of `resource.k8s.io` a simulated cluster can serve, newest first. */
export type ResourceApiVersion = "v1" | "v1beta2" | "v1beta1"

const resourceSliceVersions: Readonly<Record<ResourceApiVersion, ResourceKind>> = {
  v1: resourceSlices,
  v1beta2: resourceSlicesV1beta2,
  v1beta1: resourceSlicesV1beta1,
}

/** The resources every simulated cluster serves. */
export const allKinds: ReadonlyArray<ResourceKind> = [pods, nodes, namespaces, leases]

/**
 * The resources a cluster with Dynamic Resource Allocation serves: the base ones and ResourceSlices in
 * the given `resource.k8s.io` versions, listed newest first as discovery prefers them.
 */
export const draKinds = (
  versions: ReadonlyArray<ResourceApiVersion> = ["v1", "v1beta2", "v1beta1"],
): ReadonlyArray<ResourceKind> => [
  ...allKinds,
  ...(["v1", "v1beta2", "v1beta1"] as const)
    .filter((version) => versions.includes(version))
    .map((version) => resourceSliceVersions[version]),
]

export const labelsOf = (object: JsonObject): Record<string, string> => {
  const metadata = object.metadata
  if (!isJsonObject(metadata)) return {}
  const labels = metadata.labels
  if (!isJsonObject(labels)) return {}
  const result: Record<string, string> = {}
  for (const [key, value] of Object.entries(labels)) if (typeof value === "string") result[key] = value
  return result
}
