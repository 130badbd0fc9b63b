import { cloneJson, isJsonObject, type JsonObject, type JsonValue } from "../Json.ts"

/** RFC 7386 JSON Merge Patch (`application/merge-patch+json`): objects merge, `null` deletes, the rest replaces. */
export const applyMergePatch = (target: JsonValue | undefined, patch: JsonValue): JsonValue => {
  if (!isJsonObject(patch)) return cloneJson(patch)
  const result: JsonObject = isJsonObject(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else result[key] = applyMergePatch(result[key], value)
  }
  return result
}
