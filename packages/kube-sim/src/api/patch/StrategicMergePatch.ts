import { badRequest } from "../ApiStatus.ts"
import { cloneJson, isJsonObject, type JsonArray, type JsonObject, type JsonValue, jsonEquals } from "../Json.ts"

/** Patch strategy of a list field, from the Go struct tags of the core types (`patchMergeKey`, `patchStrategy`). */
type ListStrategy = { readonly mergeKey: string } | { readonly primitiveMerge: true }

const listStrategies: Readonly<Record<string, ListStrategy>> = {
  "metadata.finalizers": { primitiveMerge: true },
  "metadata.ownerReferences": { mergeKey: "uid" },
  "spec.containers": { mergeKey: "name" },
  "spec.initContainers": { mergeKey: "name" },
  "spec.ephemeralContainers": { mergeKey: "name" },
  "spec.containers.env": { mergeKey: "name" },
  "spec.containers.ports": { mergeKey: "containerPort" },
  "spec.containers.volumeMounts": { mergeKey: "mountPath" },
  "spec.initContainers.env": { mergeKey: "name" },
  "spec.initContainers.volumeMounts": { mergeKey: "mountPath" },
  "spec.volumes": { mergeKey: "name" },
  "spec.imagePullSecrets": { mergeKey: "name" },
  "spec.podCIDRs": { primitiveMerge: true },
  "status.conditions": { mergeKey: "type" },
  "status.addresses": { mergeKey: "type" },
}

const directive = "$patch"
const retainKeys = "$retainKeys"
const deleteFromPrimitiveList = "$deleteFromPrimitiveList/"
const setElementOrder = "$setElementOrder/"

/**
 * Strategic merge patch (`application/strategic-merge-patch+json`): a merge patch that merges lists by
 * their merge key where the type says so, with the `$patch`, `$retainKeys`, `$deleteFromPrimitiveList`
 * and `$setElementOrder` directives.
 */
export const applyStrategicMergePatch = (target: JsonValue, patch: JsonValue): JsonValue => {
  if (!isJsonObject(patch)) throw badRequest("strategic merge patch must be a JSON object")
  return mergeMap(isJsonObject(target) ? target : {}, patch, "") ?? {}
}

const mergeMap = (target: JsonObject, patch: JsonObject, path: string): JsonObject | undefined => {
  const instruction = patch[directive]
  if (instruction === "delete") return undefined
  if (instruction === "replace") {
    const replaced: JsonObject = {}
    for (const [key, value] of Object.entries(patch)) if (key !== directive) replaced[key] = cloneJson(value)
    return replaced
  }
  const result: JsonObject = { ...target }
  for (const [key, value] of Object.entries(patch)) {
    if (key === directive || key === retainKeys || key.startsWith(setElementOrder)) continue
    if (key.startsWith(deleteFromPrimitiveList)) {
      const field = key.slice(deleteFromPrimitiveList.length)
      const existing = result[field]
      if (Array.isArray(existing) && Array.isArray(value))
        result[field] = existing.filter((item) => !value.some((removed) => jsonEquals(removed, item)))
      continue
    }
    const childPath = path === "" ? key : `${path}.${key}`
    if (value === null) {
      delete result[key]
      continue
    }
    const existing = result[key]
    if (isJsonObject(value)) {
      const merged = mergeMap(isJsonObject(existing) ? existing : {}, value, childPath)
      if (merged === undefined) delete result[key]
      else result[key] = merged
    } else if (Array.isArray(value)) result[key] = mergeList(Array.isArray(existing) ? existing : [], value, childPath)
    else result[key] = value
  }
  const retained = patch[retainKeys]
  if (Array.isArray(retained)) {
    const keep = new Set(retained.filter((key): key is string => typeof key === "string"))
    for (const key of Object.keys(result)) if (!keep.has(key)) delete result[key]
  }
  return result
}

const mergeList = (target: JsonArray, patch: JsonArray, path: string): JsonArray => {
  const strategy = listStrategies[path]
  const replaceAll = patch.some((item) => isJsonObject(item) && item[directive] === "replace")
  if (replaceAll) return patch.filter((item) => !(isJsonObject(item) && item[directive] === "replace")).map(cloneJson)
  if (strategy === undefined) return patch.map(cloneJson)
  if ("primitiveMerge" in strategy) {
    const result = [...target]
    for (const item of patch) if (!result.some((existing) => jsonEquals(existing, item))) result.push(cloneJson(item))
    return result
  }
  const key = strategy.mergeKey
  const result: JsonArray = target.map(cloneJson)
  for (const item of patch) {
    if (!isJsonObject(item)) {
      result.push(cloneJson(item))
      continue
    }
    const index = result.findIndex((existing) => isJsonObject(existing) && jsonEquals(existing[key], item[key]))
    if (item[directive] === "delete") {
      if (index >= 0) result.splice(index, 1)
      continue
    }
    const existing = index >= 0 ? result[index] : undefined
    const merged = mergeMap(isJsonObject(existing) ? existing : {}, item, path)
    if (merged === undefined) {
      if (index >= 0) result.splice(index, 1)
    } else if (index >= 0) result[index] = merged
    else result.push(merged)
  }
  return result
}
