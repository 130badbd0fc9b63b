/**
 * An index of the inventory (nodes by name, GPU locations by UUID) as a persistent map over native
 * `Map`s: the keys are spread over 64 × 64 shards by a hash of the key, and an edit copies the root,
 * the branches and the shards it touches, once each, so a new index shares every other shard with
 * the one it came from. Native `Map`s hold an entry in a few words, where a hash trie spends a node
 * object and an array slot on each; a transition touches one node and its GPUs, so it copies a
 * handful of small shards. An index is never changed once built: `edit` starts a new one.
 */
export class ShardedIndex<V> implements ReadonlyMap<string, V> {
  private readonly root: ReadonlyArray<Branch<V> | undefined>
  readonly size: number

  /** An index over its shards; `empty`, `of` and `edit` build them. */
  constructor(root: ReadonlyArray<Branch<V> | undefined>, size: number) {
    this.root = root
    this.size = size
  }

  static empty<V>(): ShardedIndex<V> {
    return new ShardedIndex<V>(emptyRoot as ReadonlyArray<Branch<V> | undefined>, 0)
  }

  /** The index of `entries`, the last value of a key winning. */
  static of<V>(entries: Iterable<readonly [string, V]>): ShardedIndex<V> {
    const edit = ShardedIndex.empty<V>().edit()
    for (const [key, value] of entries) edit.set(key, value)
    return edit.done()
  }

  get(key: string): V | undefined {
    const hash = hashOf(key)
    return this.root[hash & mask]?.[(hash >>> bits) & mask]?.get(key)
  }

  has(key: string): boolean {
    const hash = hashOf(key)
    return this.root[hash & mask]?.[(hash >>> bits) & mask]?.has(key) ?? false
  }

  /** A batch of changes to this index, which stays as it is. */
  edit(): ShardedIndexEdit<V> {
    return new ShardedIndexEdit(this.root, this.size)
  }

  *entries(): MapIterator<[string, V]> {
    for (const shard of this.shards()) yield* shard.entries()
  }

  *keys(): MapIterator<string> {
    for (const shard of this.shards()) yield* shard.keys()
  }

  *values(): MapIterator<V> {
    for (const shard of this.shards()) yield* shard.values()
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries()
  }

  forEach(callback: (value: V, key: string, map: ReadonlyMap<string, V>) => void): void {
    for (const [key, value] of this.entries()) callback(value, key, this)
  }

  private shards(): ReadonlyArray<Map<string, V>> {
    const shards: Array<Map<string, V>> = []
    for (const branch of this.root) {
      if (branch === undefined) continue
      for (const shard of branch) if (shard !== undefined && shard.size > 0) shards.push(shard)
    }
    return shards
  }
}

/**
 * Changes to an index, collected into a new one: each root, branch and shard is copied on its first
 * change only. `done` hands the result over; the edit must not be used after it.
 */
export class ShardedIndexEdit<V> {
  private root: Array<Branch<V> | undefined> | undefined
  private readonly ownBranches = new Set<number>()
  private readonly ownShards = new Set<number>()

  private readonly base: ReadonlyArray<Branch<V> | undefined>
  private size: number

  constructor(base: ReadonlyArray<Branch<V> | undefined>, size: number) {
    this.base = base
    this.size = size
  }

  get(key: string): V | undefined {
    const hash = hashOf(key)
    return (this.root ?? this.base)[hash & mask]?.[(hash >>> bits) & mask]?.get(key)
  }

  set(key: string, value: V): void {
    const shard = this.ownShard(hashOf(key))
    if (!shard.has(key)) this.size++
    shard.set(key, value)
  }

  delete(key: string): void {
    const hash = hashOf(key)
    if ((this.root ?? this.base)[hash & mask]?.[(hash >>> bits) & mask]?.has(key) !== true) return
    const shard = this.ownShard(hash)
    shard.delete(key)
    this.size--
    if (shard.size === 0) this.dropShard(hash)
  }

  done(): ShardedIndex<V> {
    return new ShardedIndex(this.root ?? this.base, this.size)
  }

  /**
   * Lets go of an emptied shard, and of its branch once that holds no shard, so an index whose keys come
   * and go (nodes of a churning fleet) holds only shards with entries, not every shard it ever filled.
   */
  private dropShard(hash: number): void {
    const root = this.root as Array<Branch<V> | undefined>
    const branchAt = hash & mask
    const branch = root[branchAt] as Array<Map<string, V> | undefined>
    branch[(hash >>> bits) & mask] = undefined
    if (branch.every((shard) => shard === undefined)) root[branchAt] = undefined
  }

  private ownShard(hash: number): Map<string, V> {
    if (this.root === undefined) this.root = [...this.base]
    const root = this.root
    const branchAt = hash & mask
    const shardAt = hash & shardMask
    let branch = root[branchAt] as Array<Map<string, V> | undefined> | undefined
    if (branch === undefined || !this.ownBranches.has(branchAt)) {
      branch = branch === undefined ? new Array<Map<string, V> | undefined>(width).fill(undefined) : [...branch]
      root[branchAt] = branch
      this.ownBranches.add(branchAt)
    }
    const at = (hash >>> bits) & mask
    let shard = branch[at]
    if (shard === undefined || !this.ownShards.has(shardAt)) {
      shard = new Map(shard)
      branch[at] = shard
      this.ownShards.add(shardAt)
    }
    return shard
  }
}

type Branch<V> = ReadonlyArray<Map<string, V> | undefined>

const bits = 6
const width = 1 << bits
const mask = width - 1
const shardMask = (1 << (2 * bits)) - 1
const emptyRoot: ReadonlyArray<undefined> = new Array<undefined>(width).fill(undefined)

/** FNV-1a over the UTF-16 code units: cheap, and spreads UUIDs and node names evenly. */
const hashOf = (key: string): number => {
  let hash = 0x811c9dc5
  for (let at = 0; at < key.length; at++) {
    hash ^= key.charCodeAt(at)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}
