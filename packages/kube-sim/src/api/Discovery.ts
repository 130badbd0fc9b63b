import type { JsonObject } from "./Json.ts"
import { allKinds, type ResourceKind } from "./ResourceKind.ts"

/** What `GET /version` answers. */
export interface ServerVersion {
  readonly major: string
  readonly minor: string
  readonly gitVersion: string
  readonly gitCommit: string
  readonly gitTreeState: string
  readonly buildDate: string
  readonly goVersion: string
  readonly compiler: string
  readonly platform: string
}

/** The Kubernetes release the API server reports; kubectl's version skew checks read it. */
export const serverVersion: ServerVersion = {
  major: "1",
  minor: "32",
  gitVersion: "v1.32.4",
  gitCommit: "59526cd4867447956156ae3a602fcbac10a2c335",
  gitTreeState: "clean",
  buildDate: "2025-04-22T16:02:27Z",
  goVersion: "go1.23.6",
  compiler: "gc",
  platform: "linux/amd64",
}

/** The release of a cluster that serves `resource.k8s.io/v1beta2` but not v1 (1.33 is the first with it). */
export const v1beta2ServerVersion: ServerVersion = {
  major: "1",
  minor: "33",
  gitVersion: "v1.33.5",
  gitCommit: "7d4a8ba6e6a0d1cc4a5a4b4de0bbe42b2a2c9b3d",
  gitTreeState: "clean",
  buildDate: "2025-09-09T19:43:34Z",
  goVersion: "go1.24.6",
  compiler: "gc",
  platform: "linux/amd64",
}

/** The release a cluster with DRA reports: 1.34 is the first to serve `resource.k8s.io/v1`. */
export const draServerVersion: ServerVersion = {
  major: "1",
  minor: "34",
  gitVersion: "v1.34.2",
  gitCommit: "8cc511e399b929453cd98ae65b419c3cc227ec79",
  gitTreeState: "clean",
  buildDate: "2025-11-11T19:04:43Z",
  goVersion: "go1.24.9",
  compiler: "gc",
  platform: "linux/amd64",
}

/** `GET /api`: the legacy core group versions. */
export const coreApiVersions = (serverAddress: string): JsonObject => ({
  kind: "APIVersions",
  versions: ["v1"],
  serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
})

const groupsOf = (kinds: ReadonlyArray<ResourceKind>): string[] => [
  ...new Set(kinds.map((kind) => kind.group).filter((group) => group !== "")),
]

const groupVersion = (group: string, version: string): JsonObject => ({ groupVersion: `${group}/${version}`, version })

/** The versions of a group, in the order the kinds list them (the preferred one first). */
const versionsOf = (group: string, kinds: ReadonlyArray<ResourceKind>): string[] => [
  ...new Set(kinds.filter((kind) => kind.group === group).map((kind) => kind.version)),
]

/** `GET /apis/<group>`; undefined for a group the server does not serve. */
export const apiGroup = (group: string, kinds: ReadonlyArray<ResourceKind> = allKinds): JsonObject | undefined =>
  kinds.some((kind) => kind.group === group && group !== "")
    ? {
        kind: "APIGroup",
        apiVersion: "v1",
        name: group,
        versions: versionsOf(group, kinds).map((version) => groupVersion(group, version)),
        preferredVersion: groupVersion(group, versionsOf(group, kinds)[0] ?? "v1"),
      }
    : undefined

/** `GET /apis`: the named groups, legacy (unaggregated) form. */
export const apiGroupList = (kinds: ReadonlyArray<ResourceKind> = allKinds): JsonObject => ({
  kind: "APIGroupList",
  apiVersion: "v1",
  groups: groupsOf(kinds).flatMap((group) => {
    const served = apiGroup(group, kinds)
    if (served === undefined) return []
    const { kind: _, apiVersion: __, ...rest } = served
    return [rest]
  }),
})

/** `GET /api/v1` or `GET /apis/<group>/<version>`: the resources of one group version. */
export const apiResourceList = (
  group: string,
  version: string,
  served: ReadonlyArray<ResourceKind> = allKinds,
): JsonObject | undefined => {
  const kinds = served.filter((kind) => kind.group === group && kind.version === version)
  if (kinds.length === 0) return undefined
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: group === "" ? version : `${group}/${version}`,
    resources: kinds.flatMap((kind) => [resourceEntry(kind), ...subresourceEntries(kind)]),
  }
}

const resourceEntry = (kind: ResourceKind): JsonObject => {
  const entry: JsonObject = {
    name: kind.resource,
    singularName: kind.singular,
    namespaced: kind.namespaced,
    kind: kind.kind,
    verbs: [...kind.verbs],
  }
  if (kind.shortNames.length > 0) entry.shortNames = [...kind.shortNames]
  if (kind.categories.length > 0) entry.categories = [...kind.categories]
  entry.storageVersionHash = storageVersionHash(kind)
  return entry
}

const subresourceEntries = (kind: ResourceKind): JsonObject[] =>
  kind.subresources.map((subresource) => ({
    name: `${kind.resource}/${subresource.name}`,
    singularName: "",
    namespaced: kind.namespaced,
    kind: subresource.kind,
    verbs: [...subresource.verbs],
  }))

/** A stable 8-byte base64 tag per resource, shaped like the API server's storage version hash. */
const storageVersionHash = (kind: ResourceKind): string => {
  let hash = 2166136261
  for (const char of `${kind.group}/${kind.version}/${kind.kind}`) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619)
  const bytes = Buffer.alloc(8)
  bytes.writeUInt32BE(hash >>> 0, 0)
  bytes.writeUInt32BE(Math.imul(hash, 2654435761) >>> 0, 4)
  return bytes.toString("base64")
}
