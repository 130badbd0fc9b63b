/**
 * A sorted array of (key, id) pairs, ordered by key then id, with prefix and exact ranges found by binary
 * search. Changes wait in a small set and are applied on the next read: a few by insertion into the
 * array, many at once by one rebuild, so loading a whole fleet costs one sort and a steady trickle of
 * changes costs a memory move each, never a sort per request.
 */
export class SortedKeys {
  private keys: Array<string> = []
  private ids: Array<string> = []
  /** The key each id has now, as set; what the array holds may lag until `settle`. */
  private readonly current = new Map<string, string>()
  /** Ids whose key changed since the array was last settled, with the key the array holds for them (undefined: none). */
  private readonly changed = new Map<string, string | undefined>()
  private held = new Map<string, string>()

  get size(): number {
    return this.current.size
  }

  /** Sets the key of `id`, or removes it when `key` is undefined. */
  set(id: string, key: string | undefined): void {
    const before = this.current.get(id)
    if (before === key) return
    if (!this.changed.has(id)) this.changed.set(id, this.held.get(id))
    if (key === undefined) this.current.delete(id)
    else this.current.set(id, key)
  }

  clear(): void {
    this.keys = []
    this.ids = []
    this.current.clear()
    this.changed.clear()
    this.held = new Map()
  }

  /** The ids whose key starts with `prefix` (every id for ""), in order. */
  prefix(prefix: string): ReadonlyArray<string> {
    this.settle()
    const from = this.lowerBound(prefix, "")
    const to = this.lowerBound(`${prefix}\uffff`, "")
    return this.ids.slice(from, to)
  }

  /** How many ids have a key starting with `prefix`, without copying them. */
  countPrefix(prefix: string): number {
    this.settle()
    return this.lowerBound(`${prefix}\uffff`, "") - this.lowerBound(prefix, "")
  }

  /** The ids whose key is exactly `key`, in id order. */
  exact(key: string): ReadonlyArray<string> {
    this.settle()
    const from = this.lowerBound(key, "")
    let to = from
    while (to < this.keys.length && this.keys[to] === key) to++
    return this.ids.slice(from, to)
  }

  /** Every id, in key order. */
  all(): ReadonlyArray<string> {
    this.settle()
    return this.ids
  }

  /** The key the index holds for `id`, once settled. */
  keyOf(id: string): string | undefined {
    return this.current.get(id)
  }

  /** The first position whose (key, id) is not below (`key`, `id`). */
  lowerBound(key: string, id: string): number {
    let low = 0
    let high = this.keys.length
    while (low < high) {
      const middle = (low + high) >>> 1
      const k = this.keys[middle] as string
      if (k < key || (k === key && (this.ids[middle] as string) < id)) low = middle + 1
      else high = middle
    }
    return low
  }

  private settle(): void {
    if (this.changed.size === 0) return
    // Each insertion or removal moves the array once; past this many a sort is cheaper.
    if (this.changed.size > 64 && this.changed.size * 32 > this.keys.length) this.rebuild()
    else {
      for (const [id, heldKey] of this.changed) {
        if (heldKey !== undefined) {
          const at = this.lowerBound(heldKey, id)
          this.keys.splice(at, 1)
          this.ids.splice(at, 1)
        }
        const key = this.current.get(id)
        if (key !== undefined) {
          const at = this.lowerBound(key, id)
          this.keys.splice(at, 0, key)
          this.ids.splice(at, 0, id)
          this.held.set(id, key)
        } else this.held.delete(id)
      }
    }
    this.changed.clear()
  }

  private rebuild(): void {
    const pairs = [...this.current].sort(([idA, keyA], [idB, keyB]) =>
      keyA < keyB ? -1 : keyA > keyB ? 1 : idA < idB ? -1 : idA > idB ? 1 : 0,
    )
    this.keys = pairs.map(([, key]) => key)
    this.ids = pairs.map(([id]) => id)
    this.held = new Map(this.current)
  }
}
