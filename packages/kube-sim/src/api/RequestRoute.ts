import { allKinds, namespaces, type ResourceKind } from "./ResourceKind.ts"

/** Where a REST path points: a resource collection, one object, or one of its subresources. */
export interface ResourceRoute {
  readonly kind: ResourceKind
  /** Empty for cluster-scoped resources and for lists across all namespaces. */
  readonly namespace: string
  readonly name: string
  readonly subresource: string
}

export type DiscoveryRoute =
  | { readonly discovery: "version" }
  | { readonly discovery: "core-versions" }
  | { readonly discovery: "groups" }
  | { readonly discovery: "group"; readonly group: string }
  | { readonly discovery: "resources"; readonly group: string; readonly version: string }
  | { readonly discovery: "health" }

const decode = (segment: string): string => decodeURIComponent(segment)

export const routeOf = (
  pathname: string,
  kinds: ReadonlyArray<ResourceKind> = allKinds,
): ResourceRoute | DiscoveryRoute | undefined => {
  const segments = pathname
    .split("/")
    .filter((segment) => segment !== "")
    .map(decode)
  if (segments.length === 0) return undefined
  const [root, ...rest] = segments
  if (root === "version" && rest.length === 0) return { discovery: "version" }
  if ((root === "healthz" || root === "livez" || root === "readyz") && rest.length <= 1) return { discovery: "health" }
  if (root === "api") {
    if (rest.length === 0) return { discovery: "core-versions" }
    const [version, ...path] = rest
    if (version === undefined) return undefined
    if (path.length === 0) return { discovery: "resources", group: "", version }
    return resourceRoute(kinds, "", version, path)
  }
  if (root === "apis") {
    if (rest.length === 0) return { discovery: "groups" }
    const [group, version, ...path] = rest
    if (group === undefined) return undefined
    if (version === undefined) return { discovery: "group", group }
    if (path.length === 0) return { discovery: "resources", group, version }
    return resourceRoute(kinds, group, version, path)
  }
  return undefined
}

const resourceRoute = (
  kinds: ReadonlyArray<ResourceKind>,
  group: string,
  version: string,
  path: string[],
): ResourceRoute | undefined => {
  const find = (resource: string | undefined) =>
    kinds.find((kind) => kind.group === group && kind.version === version && kind.resource === resource)
  if (path[0] === "namespaces" && path.length >= 3) {
    const [, namespace = "", resource, name = "", subresource = "", ...extra] = path
    const kind = find(resource)
    if (kind === undefined || !kind.namespaced || extra.length > 0) return undefined
    return { kind, namespace, name, subresource }
  }
  const [resource, name = "", subresource = "", ...extra] = path
  const kind = find(resource)
  if (kind === undefined || extra.length > 0) return undefined
  if (kind === namespaces || !kind.namespaced) return { kind, namespace: "", name, subresource }
  if (name !== "") return undefined
  return { kind, namespace: "", name: "", subresource: "" }
}
