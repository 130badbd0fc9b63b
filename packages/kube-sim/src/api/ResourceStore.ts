import { alreadyExists, conflict, expired, invalid, notFound } from "./ApiStatus.ts"
import { isJsonObject, type JsonObject } from "./Json.ts"
import { apiVersionOf, labelsOf, namespaces, type ResourceKind } from "./ResourceKind.ts"

/** An object as stored: immutable, with its serialised form kept so lists and watches never re-encode it. */
export interface StoredObject {
  readonly kind: ResourceKind
  readonly key: string
  readonly namespace: string
  readonly name: string
  readonly resourceVersion: number
  readonly object: JsonObject
  readonly json: string
  /** `json` encoded once, so a list of thousands of objects is a buffer concatenation. */
  readonly bytes: Buffer
  readonly labels: Readonly<Record<string, string>>
}

export type StoreEventType = "ADDED" | "MODIFIED" | "DELETED"

/** One committed change. `previous` is the state before it (absent for ADDED). */
export interface StoreEvent {
  readonly type: StoreEventType
  readonly resourceVersion: number
  readonly current: StoredObject
  readonly previous: StoredObject | undefined
}

export type StoreListener = (event: StoreEvent) => void

export interface ResourceStoreOptions {
  /** How many committed events are kept for watches that resume from a resourceVersion. */
  readonly historyLimit: number
  readonly newUid: () => string
  readonly newNameSuffix: () => string
  readonly now: () => Date
}

interface Collection {
  readonly objects: Map<string, StoredObject>
  sortedKeys: string[] | undefined
}

const namePattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

export const objectKey = (namespace: string, name: string): string => (namespace === "" ? name : `${namespace}/${name}`)

export const metadataOf = (object: JsonObject): JsonObject => {
  const metadata = object.metadata
  if (isJsonObject(metadata)) return metadata
  const created: JsonObject = {}
  object.metadata = created
  return created
}

export const timestampOf = (date: Date): string => `${date.toISOString().slice(0, 19)}Z`

/**
 * The cluster state: one global, monotonically increasing resourceVersion like etcd's revision, a bounded
 * window of past events for watches that resume, and synchronous fan-out of each commit to listeners.
 */
export class ResourceStore {
  private readonly collections = new Map<string, Collection>()
  private readonly listeners = new Map<string, Set<StoreListener>>()
  private history: StoreEvent[] = []
  private revision = 1000
  private compactedRevision = 1000
  private readonly options: ResourceStoreOptions

  constructor(options: ResourceStoreOptions) {
    this.options = options
  }

  get currentRevision(): number {
    return this.revision
  }

  /** The oldest resourceVersion a watch may still resume from. */
  get oldestRevision(): number {
    return this.compactedRevision
  }

  /** Forgets all history, as an etcd compaction does: older resourceVersions become 410 Gone. */
  compact(): void {
    this.history = []
    this.compactedRevision = this.revision
  }

  subscribe(kind: ResourceKind, listener: StoreListener): () => void {
    let set = this.listeners.get(kind.resource)
    if (set === undefined) {
      set = new Set()
      this.listeners.set(kind.resource, set)
    }
    set.add(listener)
    return () => set.delete(listener)
  }

  get(kind: ResourceKind, namespace: string, name: string): StoredObject | undefined {
    return this.collection(kind).objects.get(objectKey(kind.namespaced ? namespace : "", name))
  }

  require(kind: ResourceKind, namespace: string, name: string): StoredObject {
    const stored = this.get(kind, namespace, name)
    if (stored === undefined) throw notFound(kind.resource, kind.group, name)
    return stored
  }

  count(kind: ResourceKind): number {
    return this.collection(kind).objects.size
  }

  /** Current objects in key order (namespace, then name), as etcd lists them. */
  list(kind: ResourceKind, namespace?: string): StoredObject[] {
    const collection = this.collection(kind)
    const keys = this.sortedKeys(collection)
    const result: StoredObject[] = []
    const prefix = namespace === undefined || namespace === "" || !kind.namespaced ? undefined : `${namespace}/`
    for (const key of keys) {
      if (prefix !== undefined && !key.startsWith(prefix)) continue
      const stored = collection.objects.get(key)
      if (stored !== undefined) result.push(stored)
    }
    return result
  }

  /** The objects as they were at `revision`, rebuilt by undoing later events; 410 when that is compacted. */
  listAt(kind: ResourceKind, revision: number, namespace?: string): StoredObject[] {
    if (revision < this.compactedRevision)
      throw expired(`too old resource version: ${revision} (${this.compactedRevision})`)
    if (revision >= this.revision) return this.list(kind, namespace)
    const objects = new Map(this.collection(kind).objects)
    for (let index = this.history.length - 1; index >= 0; index--) {
      const event = this.history[index]
      if (event === undefined || event.resourceVersion <= revision) break
      if (event.current.kind.resource !== kind.resource) continue
      if (event.type === "ADDED") objects.delete(event.current.key)
      else if (event.previous !== undefined) objects.set(event.previous.key, event.previous)
    }
    const prefix = namespace === undefined || namespace === "" || !kind.namespaced ? undefined : `${namespace}/`
    return [...objects.keys()]
      .filter((key) => prefix === undefined || key.startsWith(prefix))
      .sort()
      .flatMap((key) => {
        const stored = objects.get(key)
        return stored === undefined ? [] : [stored]
      })
  }

  /** Events of `kind` committed after `revision`, oldest first; 410 when the window no longer reaches back. */
  eventsSince(kind: ResourceKind, revision: number): StoreEvent[] {
    if (revision < this.compactedRevision)
      throw expired(`too old resource version: ${revision} (${this.compactedRevision})`)
    let low = 0
    let high = this.history.length
    while (low < high) {
      const middle = (low + high) >>> 1
      const event = this.history[middle]
      if (event !== undefined && event.resourceVersion <= revision) low = middle + 1
      else high = middle
    }
    const result: StoreEvent[] = []
    for (let index = low; index < this.history.length; index++) {
      const event = this.history[index]
      if (event !== undefined && event.current.kind.resource === kind.resource) result.push(event)
    }
    return result
  }

  /** Stores a new object. The store takes ownership of `object`: callers hand over a fresh one. */
  create(kind: ResourceKind, object: JsonObject, namespace = ""): StoredObject {
    const metadata = metadataOf(object)
    const objectNamespace = kind.namespaced ? namespace || stringField(metadata, "namespace") || "default" : ""
    let name = stringField(metadata, "name")
    const generateName = stringField(metadata, "generateName")
    if (name === "" && generateName !== "") name = `${generateName}${this.options.newNameSuffix()}`
    if (name === "")
      throw invalid(kind.kind, kind.group, "", "metadata.name", "Required value: name or generateName is required")
    if (name.length > 253 || !namePattern.test(name))
      throw invalid(
        kind.kind,
        kind.group,
        name,
        "metadata.name",
        `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
      )
    if (kind.namespaced && this.get(namespaces, "", objectNamespace) === undefined)
      throw notFound("namespaces", "", objectNamespace)
    const key = objectKey(objectNamespace, name)
    const collection = this.collection(kind)
    if (collection.objects.has(key)) throw alreadyExists(kind.resource, kind.group, name)
    object.apiVersion = apiVersionOf(kind)
    object.kind = kind.kind
    metadata.name = name
    if (kind.namespaced) metadata.namespace = objectNamespace
    else delete metadata.namespace
    metadata.uid = this.options.newUid()
    metadata.creationTimestamp = timestampOf(this.options.now())
    delete metadata.deletionTimestamp
    const stored = this.commit(kind, key, objectNamespace, name, object)
    collection.objects.set(key, stored)
    collection.sortedKeys = undefined
    this.publish({ type: "ADDED", resourceVersion: stored.resourceVersion, current: stored, previous: undefined })
    return stored
  }

  /**
   * Replaces an object, taking ownership of `object` as `create` does. `expectedRevision` is the resourceVersion the writer read: a mismatch is a 409
   * Conflict, the optimistic concurrency every Kubernetes update relies on. An unchanged object is not
   * written again and keeps its resourceVersion, as on a real API server.
   */
  update(kind: ResourceKind, object: JsonObject, expectedRevision?: number): StoredObject {
    const metadata = metadataOf(object)
    const name = stringField(metadata, "name")
    const namespace = kind.namespaced ? stringField(metadata, "namespace") : ""
    const existing = this.require(kind, namespace, name)
    if (expectedRevision !== undefined && expectedRevision !== existing.resourceVersion)
      throw conflict(kind.resource, kind.group, name)
    const existingMetadata = metadataOf(existing.object)
    object.apiVersion = apiVersionOf(kind)
    object.kind = kind.kind
    metadata.uid = existingMetadata.uid ?? null
    metadata.creationTimestamp = existingMetadata.creationTimestamp ?? null
    if (existingMetadata.deletionTimestamp !== undefined && metadata.deletionTimestamp === undefined)
      metadata.deletionTimestamp = existingMetadata.deletionTimestamp
    metadata.resourceVersion = String(existing.resourceVersion)
    if (JSON.stringify(object) === existing.json) return existing
    const stored = this.commit(kind, existing.key, namespace, name, object)
    this.collection(kind).objects.set(existing.key, stored)
    this.publish({ type: "MODIFIED", resourceVersion: stored.resourceVersion, current: stored, previous: existing })
    return stored
  }

  delete(kind: ResourceKind, namespace: string, name: string, expectedRevision?: number): StoredObject {
    const existing = this.require(kind, namespace, name)
    if (expectedRevision !== undefined && expectedRevision !== existing.resourceVersion)
      throw conflict(kind.resource, kind.group, name)
    const object = { ...existing.object, metadata: { ...metadataOf(existing.object) } }
    const stored = this.commit(kind, existing.key, existing.namespace, name, object)
    const collection = this.collection(kind)
    collection.objects.delete(existing.key)
    collection.sortedKeys = undefined
    this.publish({ type: "DELETED", resourceVersion: stored.resourceVersion, current: stored, previous: existing })
    return stored
  }

  private commit(kind: ResourceKind, key: string, namespace: string, name: string, object: JsonObject): StoredObject {
    this.revision += 1
    metadataOf(object).resourceVersion = String(this.revision)
    const json = JSON.stringify(object)
    return {
      kind,
      key,
      namespace,
      name,
      resourceVersion: this.revision,
      object,
      json,
      bytes: ownBytes(json),
      labels: labelsOf(object),
    }
  }

  private publish(event: StoreEvent): void {
    this.history.push(event)
    const limit = this.options.historyLimit
    if (this.history.length > limit + Math.max(16, limit >> 3)) {
      const dropped = this.history.length - limit
      const last = this.history[dropped - 1]
      if (last !== undefined) this.compactedRevision = last.resourceVersion
      this.history = this.history.slice(dropped)
    }
    const listeners = this.listeners.get(event.current.kind.resource)
    if (listeners === undefined) return
    for (const listener of [...listeners]) listener(event)
  }

  private collection(kind: ResourceKind): Collection {
    let collection = this.collections.get(kind.resource)
    if (collection === undefined) {
      collection = { objects: new Map(), sortedKeys: undefined }
      this.collections.set(kind.resource, collection)
    }
    return collection
  }

  private sortedKeys(collection: Collection): string[] {
    if (collection.sortedKeys === undefined) collection.sortedKeys = [...collection.objects.keys()].sort()
    return collection.sortedKeys
  }
}

const stringField = (object: JsonObject, field: string): string => {
  const value = object[field]
  return typeof value === "string" ? value : ""
}

/**
 * The bytes of `json` in a buffer of their own. `Buffer.from` puts short texts in a slice of Node's
 * shared pool (64 KiB in Node 24): kept in the watch history, each slice would keep its whole pool alive,
 * some ten times the objects' size.
 */
const ownBytes = (json: string): Buffer => {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(json, "utf8"))
  bytes.write(json, "utf8")
  return bytes
}
