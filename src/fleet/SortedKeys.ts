/** Changes that may wait for a read before they are settled, at the least. */
const settleAtLeast = 4096

/**
 * And at the most: past it a waiting map is a large object (half a megabyte), and at 232,000 GPUs an
 * eighth of the five indexes' arrays waiting was 5 MB of maps that a first sync no one reads holds.
 */
const settleAtMost = 16_384

/**
 * A sorted array of ids, ordered by their keys then by id, with prefix and exact ranges found by binary
 * search. The keys are not kept: each is read from its owner's data (`keyOf`) when the search needs it, so
 * an index costs a fleet one array slot per id. Changes wait in a map with the key the array holds for each
 * id and are applied on the next read (or once many wait): a few by insertion into the array, more by
 * sorting them alone and merging them in one pass, so loading a whole fleet costs one sort and a trickle of
 * changes costs a memory move each, never a sort of the whole fleet per request.
 */
export class SortedKeys {
  private ids: Array<string> = []
  /** Ids whose key changed since the array was last settled, with the key the array holds for them (undefined: none). */
  private readonly changed = new Map<string, string | undefined>()
  /** The key each id has now (undefined: none), read from its owner's data, not kept twice. */
  private readonly keyOf: (id: string) => string | undefined

  constructor(keyOf: (id: string) => string | undefined) {
    this.keyOf = keyOf
  }

  /**
   * Says the key of `id` is about to change (or to be set or removed), with the key it has before the
   * change; called before the owner's data changes, then `keyOf` gives the new one.
   */
  changing(id: string, before: string | undefined): void {
    // Unchanged since the last settle, the key it had is the one the array holds.
    if (this.changed.has(id)) return
    // Settled without a read once an eighth of the array waits (or `settleAtMost`), so an index no one reads
    // (a hub's, loading its fleet) does not hold a second map of every id; the ids waiting have their new keys already.
    if (this.changed.size >= Math.min(settleAtMost, Math.max(settleAtLeast, this.ids.length >>> 3))) this.settle()
    this.changed.set(id, before)
  }

  clear(): void {
    this.ids = []
    this.changed.clear()
  }

  /** How many ids have a key. */
  get size(): number {
    this.settle()
    return this.ids.length
  }

  /** The ids whose key starts with `prefix` (every id for ""), in order. */
  prefix(prefix: string): ReadonlyArray<string> {
    this.settle()
    const from = this.position(prefix, "")
    const to = this.position(`${prefix}\uffff`, "")
    return this.ids.slice(from, to)
  }

  /** How many ids have a key starting with `prefix`, without copying them. */
  countPrefix(prefix: string): number {
    this.settle()
    return this.position(`${prefix}\uffff`, "") - this.position(prefix, "")
  }

  /** The ids whose key is exactly `key`, in id order. */
  exact(key: string): ReadonlyArray<string> {
    this.settle()
    const from = this.position(key, "")
    let to = from
    while (to < this.ids.length && this.heldKey(this.ids[to] as string) === key) to++
    return this.ids.slice(from, to)
  }

  /** Every id, in key order. */
  all(): ReadonlyArray<string> {
    this.settle()
    return this.ids
  }

  /** The first position whose (key, id) is not below (`key`, `id`). */
  lowerBound(key: string, id: string): number {
    this.settle()
    return this.position(key, id)
  }

  /** The key the array is ordered by for `id`: the one it had before its change, while the change waits. */
  private heldKey(id: string): string | undefined {
    return this.changed.has(id) ? this.changed.get(id) : this.keyOf(id)
  }

  private position(key: string, id: string): number {
    let low = 0
    let high = this.ids.length
    while (low < high) {
      const middle = (low + high) >>> 1
      const at = this.ids[middle] as string
      const k = this.heldKey(at) as string
      if (k < key || (k === key && at < id)) low = middle + 1
      else high = middle
    }
    return low
  }

  private settle(): void {
    if (this.changed.size === 0) return
    // A few changes move the array once each; more are sorted among themselves and merged in one pass.
    if (this.changed.size <= 16 || this.changed.size * 512 <= this.ids.length) this.spliceChanges()
    else this.mergeChanges()
    this.changed.clear()
  }

  private spliceChanges(): void {
    for (const [id, heldKey] of this.changed) {
      if (heldKey !== undefined) this.ids.splice(this.position(heldKey, id), 1)
      // Settled: from here on the array holds it by the key it has now.
      this.changed.delete(id)
      const key = this.keyOf(id)
      if (key !== undefined) this.ids.splice(this.position(key, id), 0, id)
    }
  }

  private mergeChanges(): void {
    const added: Array<{ readonly key: string; readonly id: string }> = []
    for (const id of this.changed.keys()) {
      const key = this.keyOf(id)
      if (key !== undefined) added.push({ key, id })
    }
    added.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    // An array of the exact length, filled in place: arrays grown by push keep up to half as much again spare.
    let leaving = 0
    for (const heldKey of this.changed.values()) if (heldKey !== undefined) leaving++
    const ids = new Array<string>(this.ids.length - leaving + added.length)
    let filled = 0
    let next = 0
    for (let at = 0; at < this.ids.length; at++) {
      const id = this.ids[at] as string
      // Every changed id leaves its old place; its new one comes from `added`.
      if (this.changed.has(id)) continue
      const key = this.keyOf(id) as string
      while (next < added.length) {
        const pending = added[next] as { readonly key: string; readonly id: string }
        if (pending.key < key || (pending.key === key && pending.id < id)) {
          ids[filled++] = pending.id
          next++
        } else break
      }
      ids[filled++] = id
    }
    for (; next < added.length; next++) ids[filled++] = (added[next] as { readonly id: string }).id
    this.ids = ids
  }
}
