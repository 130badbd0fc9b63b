/** What an informer keeps of an object: its cache key and the resourceVersion that tells a change. */
export interface CachedObject {
  readonly key: string
  readonly resourceVersion: string
}

/** A change of the cache, handed to the informer's handler. */
export type CacheChange<T> =
  | { readonly _tag: "Added"; readonly object: T }
  | { readonly _tag: "Updated"; readonly previous: T; readonly object: T }
  | { readonly _tag: "Deleted"; readonly object: T }

/**
 * The informer's store of objects by key. Watch events and relists go through it and come out as the
 * changes a handler must see: an object seen again with the same resourceVersion is no change, and a
 * relist deletes what is no longer listed (an object deleted while the watch was down).
 */
export class InformerCache<T extends CachedObject> {
  private readonly objects = new Map<string, T>()

  get(key: string): T | undefined {
    return this.objects.get(key)
  }

  values(): IterableIterator<T> {
    return this.objects.values()
  }

  get size(): number {
    return this.objects.size
  }

  /** Stores an added or modified object. */
  upsert(object: T): CacheChange<T> | undefined {
    const previous = this.objects.get(object.key)
    this.objects.set(object.key, object)
    if (previous === undefined) {
      return { _tag: "Added", object }
    }
    return previous.resourceVersion === object.resourceVersion ? undefined : { _tag: "Updated", previous, object }
  }

  /** Removes a deleted object; nothing to tell when it was not known. */
  remove(object: T): CacheChange<T> | undefined {
    return this.objects.delete(object.key) ? { _tag: "Deleted", object } : undefined
  }

  /** Replaces the whole content with a fresh list. */
  replace(listed: Iterable<T>): ReadonlyArray<CacheChange<T>> {
    const seen = new Set<string>()
    const changes = this.upsertListed(listed, seen)
    changes.push(...this.removeUnlisted(seen))
    return changes
  }

  /** Stores one page of a list, adding each object's key to `seen`: a list handed over page by page. */
  upsertListed(page: Iterable<T>, seen: Set<string>): Array<CacheChange<T>> {
    const changes: Array<CacheChange<T>> = []
    for (const object of page) {
      seen.add(object.key)
      const change = this.upsert(object)
      if (change !== undefined) {
        changes.push(change)
      }
    }
    return changes
  }

  /** Ends a list handed over page by page: what no page held is deleted. */
  removeUnlisted(seen: ReadonlySet<string>): Array<CacheChange<T>> {
    const changes: Array<CacheChange<T>> = []
    for (const [key, object] of this.objects) {
      if (!seen.has(key)) {
        this.objects.delete(key)
        changes.push({ _tag: "Deleted", object })
      }
    }
    return changes
  }
}
