import { ApiError } from "../ApiStatus.ts"
import { cloneJson, isJsonObject, type JsonObject, type JsonValue, jsonEquals } from "../Json.ts"

/** RFC 6902 JSON Patch (`application/json-patch+json`): a list of add/remove/replace/move/copy/test operations. */
export const applyJsonPatch = (target: JsonValue, operations: JsonValue): JsonValue => {
  if (!Array.isArray(operations))
    throw new ApiError(400, "BadRequest", "json: cannot unmarshal object into Go value of type jsonpatch.Patch")
  let document = cloneJson(target)
  for (const operation of operations) {
    if (!isJsonObject(operation)) throw unprocessable("invalid operation")
    document = applyOperation(document, operation)
  }
  return document
}

const applyOperation = (document: JsonValue, operation: JsonObject): JsonValue => {
  const op = operation.op
  const path = pointerOf(operation, "path")
  switch (op) {
    case "add":
      return add(document, path, cloneJson(operandOf(operation)), "add")
    case "remove":
      return remove(document, path, "remove").document
    case "replace": {
      const removed = remove(document, path, "replace")
      return add(removed.document, path, cloneJson(operandOf(operation)), "replace")
    }
    case "move": {
      const from = pointerOf(operation, "from")
      const removed = remove(document, from, "move")
      return add(removed.document, path, removed.value, "move")
    }
    case "copy": {
      const from = pointerOf(operation, "from")
      return add(document, path, cloneJson(read(document, from, "copy")), "copy")
    }
    case "test": {
      const actual = read(document, path, "test")
      if (!jsonEquals(actual, operandOf(operation)))
        throw unprocessable(`testing value /${path.join("/")} failed: test failed`)
      return document
    }
    default:
      throw unprocessable(`Unexpected kind: ${String(op)}`)
  }
}

const operandOf = (operation: JsonObject): JsonValue => {
  if (!Object.hasOwn(operation, "value")) throw unprocessable("missing value")
  return operation.value ?? null
}

const pointerOf = (operation: JsonObject, field: "path" | "from"): string[] => {
  const pointer = operation[field]
  if (typeof pointer !== "string") throw unprocessable(`operation missing "${field}" string`)
  if (pointer === "") return []
  if (!pointer.startsWith("/")) throw unprocessable(`JSON pointer must be empty or start with a "/": ${pointer}`)
  return pointer
    .slice(1)
    .split("/")
    .map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"))
}

const read = (document: JsonValue, path: string[], op: string): JsonValue => {
  let cursor: JsonValue = document
  for (const token of path) {
    if (Array.isArray(cursor)) {
      const index = arrayIndex(token, cursor.length - 1, op, path)
      cursor = cursor[index] ?? null
    } else if (isJsonObject(cursor) && Object.hasOwn(cursor, token)) cursor = cursor[token] ?? null
    else throw missing(op, path)
  }
  return cursor
}

const add = (document: JsonValue, path: string[], value: JsonValue, op: string): JsonValue => {
  if (path.length === 0) return value
  const parent = read(document, path.slice(0, -1), op)
  const token = path[path.length - 1] ?? ""
  if (Array.isArray(parent)) {
    const index = token === "-" ? parent.length : arrayIndex(token, parent.length, op, path)
    parent.splice(index, 0, value)
  } else if (isJsonObject(parent)) parent[token] = value
  else throw missing(op, path)
  return document
}

const remove = (document: JsonValue, path: string[], op: string): { document: JsonValue; value: JsonValue } => {
  if (path.length === 0) return { document: null, value: document }
  const parent = read(document, path.slice(0, -1), op)
  const token = path[path.length - 1] ?? ""
  if (Array.isArray(parent)) {
    const index = arrayIndex(token, parent.length - 1, op, path)
    const [value] = parent.splice(index, 1)
    return { document, value: value ?? null }
  }
  if (isJsonObject(parent) && Object.hasOwn(parent, token)) {
    const value = parent[token] ?? null
    delete parent[token]
    return { document, value }
  }
  throw missing(op, path)
}

const arrayIndex = (token: string, max: number, op: string, path: string[]): number => {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw missing(op, path)
  const index = Number(token)
  if (index > max) throw unprocessable(`${op} operation does not apply: index out of bounds: /${path.join("/")}`)
  return index
}

const missing = (op: string, path: string[]) =>
  unprocessable(`${op} operation does not apply: doc is missing path: "/${path.join("/")}": missing value`)

const unprocessable = (message: string) =>
  new ApiError(422, "Invalid", `the server rejected our request due to an error in our request: ${message}`)
