/** JSON as it travels over the Kubernetes API: objects are plain data, never class instances. */
export type JsonPrimitive = string | number | boolean | null
export type JsonValue = JsonPrimitive | JsonObject | JsonArray
export interface JsonObject {
  [key: string]: JsonValue
}
export type JsonArray = JsonValue[]

export const isJsonObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A deep copy that shares nothing with its source, so a stored object is never mutated through a reply. */
export const cloneJson = <T extends JsonValue>(value: T): T => structuredClone(value)

export const parseJson = (text: string): JsonValue => JSON.parse(text) as JsonValue

/** Structural equality by canonical serialisation (key order ignored). */
export const jsonEquals = (a: JsonValue | undefined, b: JsonValue | undefined): boolean => {
  if (a === b) return true
  if (a === undefined || b === undefined) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    return a.every((item, index) => jsonEquals(item, b[index]))
  }
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false
    const keys = Object.keys(a)
    if (keys.length !== Object.keys(b).length) return false
    return keys.every((key) => Object.hasOwn(b, key) && jsonEquals(a[key], b[key]))
  }
  return false
}
