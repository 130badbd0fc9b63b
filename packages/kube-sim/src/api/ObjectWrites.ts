import { ApiError, badRequest, conflict, invalid } from "./ApiStatus.ts"
import { isJsonObject, type JsonObject, type JsonValue } from "./Json.ts"
import { applyMergePatch } from "./patch/JsonMergePatch.ts"
import { applyJsonPatch } from "./patch/JsonPatch.ts"
import { applyStrategicMergePatch } from "./patch/StrategicMergePatch.ts"
import type { ResourceRoute } from "./RequestRoute.ts"
import { apiVersionOf } from "./ResourceKind.ts"
import { metadataOf, type ResourceStore, type StoredObject } from "./ResourceStore.ts"

/**
 * How a DELETE is carried out for one resource. Pods terminate gracefully (the kubelet's job), so the
 * cluster decides; everything else is removed at once.
 */
export type DeletionPolicy = (stored: StoredObject, gracePeriodSeconds: number | undefined) => StoredObject

export const patchContentTypes = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/strategic-merge-patch+json",
] as const

export const createObject = (store: ResourceStore, route: ResourceRoute, body: JsonValue): StoredObject => {
  const object = objectBody(body)
  checkTypeMeta(route, object)
  const metadata = metadataOf(object)
  if (route.kind.namespaced) {
    const namespace = typeof metadata.namespace === "string" ? metadata.namespace : ""
    if (namespace !== "" && namespace !== route.namespace)
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request")
  }
  delete metadata.resourceVersion
  return store.create(route.kind, object, route.namespace)
}

export const updateObject = (store: ResourceStore, route: ResourceRoute, body: JsonValue): StoredObject => {
  const object = objectBody(body)
  checkTypeMeta(route, object)
  const metadata = metadataOf(object)
  if (metadata.name !== route.name)
    throw badRequest(
      `the name of the object (${String(metadata.name)}) does not match the name on the URL (${route.name})`,
    )
  const current = store.require(route.kind, route.namespace, route.name)
  const revisionText = typeof metadata.resourceVersion === "string" ? metadata.resourceVersion : ""
  if (revisionText === "")
    throw invalid(
      route.kind.kind,
      route.kind.group,
      route.name,
      "metadata.resourceVersion",
      "Invalid value: 0x0: must be specified for an update",
    )
  if (route.kind.namespaced) metadata.namespace = route.namespace
  const replacement = route.subresource === "status" ? withStatusOf(current.object, object) : object
  return store.update(route.kind, replacement, revisionOf(revisionText, route))
}

export const patchObject = (
  store: ResourceStore,
  route: ResourceRoute,
  contentType: string,
  body: JsonValue,
): StoredObject => {
  const current = store.require(route.kind, route.namespace, route.name)
  const base = structuredClone(current.object)
  let patched: JsonValue
  switch (contentType) {
    case "application/json-patch+json":
      patched = applyJsonPatch(base, body)
      break
    case "application/merge-patch+json":
      patched = applyMergePatch(base, body)
      break
    case "application/strategic-merge-patch+json":
      patched = applyStrategicMergePatch(base, body)
      break
    default:
      throw new ApiError(
        415,
        "UnsupportedMediaType",
        `the body of the request was in an unknown format - accepted media types include: ${patchContentTypes.join(", ")}`,
      )
  }
  if (!isJsonObject(patched)) throw badRequest("the patched object is not a JSON object")
  const metadata = metadataOf(patched)
  const revisionText = typeof metadata.resourceVersion === "string" ? metadata.resourceVersion : ""
  const expected = revisionText === "" ? current.resourceVersion : revisionOf(revisionText, route)
  if (expected !== current.resourceVersion) throw conflict(route.kind.resource, route.kind.group, route.name)
  metadata.name = route.name
  if (route.kind.namespaced) metadata.namespace = route.namespace
  const replacement = route.subresource === "status" ? withStatusOf(current.object, patched) : patched
  return store.update(route.kind, replacement, current.resourceVersion)
}

export const deleteObject = (
  store: ResourceStore,
  route: ResourceRoute,
  body: JsonValue | undefined,
  gracePeriodParameter: string | null,
  deletion: DeletionPolicy,
): JsonObject => {
  const current = store.require(route.kind, route.namespace, route.name)
  const options = isJsonObject(body) ? body : {}
  const preconditions = isJsonObject(options.preconditions) ? options.preconditions : {}
  if (
    typeof preconditions.resourceVersion === "string" &&
    preconditions.resourceVersion !== String(current.resourceVersion)
  )
    throw conflict(route.kind.resource, route.kind.group, route.name)
  if (typeof preconditions.uid === "string" && preconditions.uid !== metadataOf(current.object).uid)
    throw conflict(route.kind.resource, route.kind.group, route.name)
  const graceText =
    gracePeriodParameter ?? (typeof options.gracePeriodSeconds === "number" ? String(options.gracePeriodSeconds) : "")
  const gracePeriodSeconds = graceText === "" ? undefined : Number(graceText)
  const result = deletion(
    current,
    gracePeriodSeconds !== undefined && Number.isFinite(gracePeriodSeconds) ? gracePeriodSeconds : undefined,
  )
  if (route.kind.resource === "pods") return result.object
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    details: {
      name: route.name,
      ...(route.kind.group === "" ? {} : { group: route.kind.group }),
      kind: route.kind.resource,
      uid: String(metadataOf(current.object).uid ?? ""),
    },
  }
}

const objectBody = (body: JsonValue): JsonObject => {
  if (!isJsonObject(body)) throw badRequest("the body of the request is not a JSON object")
  return structuredClone(body)
}

const checkTypeMeta = (route: ResourceRoute, object: JsonObject) => {
  const expected = apiVersionOf(route.kind)
  if (typeof object.apiVersion === "string" && object.apiVersion !== expected)
    throw badRequest(
      `the API version in the data (${object.apiVersion}) does not match the expected API version (${expected})`,
    )
  if (typeof object.kind === "string" && object.kind !== route.kind.kind)
    throw badRequest(`the kind in the data (${object.kind}) does not match the expected kind (${route.kind.kind})`)
}

const revisionOf = (text: string, route: ResourceRoute): number => {
  const revision = Number(text)
  if (!Number.isInteger(revision) || revision < 0)
    throw invalid(route.kind.kind, route.kind.group, route.name, "metadata.resourceVersion", `Invalid value: "${text}"`)
  return revision
}

/** A write to the `status` subresource changes only `status`; everything else stays as stored. */
const withStatusOf = (current: JsonObject, written: JsonObject): JsonObject => {
  const result = structuredClone(current)
  if (written.status === undefined) delete result.status
  else result.status = written.status
  return result
}
