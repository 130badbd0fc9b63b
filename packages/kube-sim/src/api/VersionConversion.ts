import type { JsonObject } from "./Json.ts"
import type { ResourceKind } from "./ResourceKind.ts"
import type { StoredObject } from "./ResourceStore.ts"

const converted = new WeakMap<ResourceKind, WeakMap<StoredObject, StoredObject>>()

/**
 * An object as a client reading it through `kind`'s version sees it. Objects are stored in one version,
 * as etcd holds them; a kind served in another version converts each object once, on first read.
 */
export const asServed = (kind: ResourceKind, stored: StoredObject): StoredObject => {
  const convert = kind.convert
  if (convert === undefined || stored.kind === kind) return stored
  let views = converted.get(kind)
  if (views === undefined) {
    views = new WeakMap()
    converted.set(kind, views)
  }
  const cached = views.get(stored)
  if (cached !== undefined) return cached
  const object: JsonObject = convert(structuredClone(stored.object))
  const json = JSON.stringify(object)
  const view: StoredObject = { ...stored, kind, object, json, bytes: Buffer.from(json, "utf8") }
  views.set(stored, view)
  return view
}
