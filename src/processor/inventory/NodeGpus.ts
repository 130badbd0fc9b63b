import type { KnownGpu } from "../../domain/KnownGpu.ts"

/** Most GPUs a node's entry finds by a walk of its list; a larger node keeps a `Map`. */
const listedAtMost = 32

/**
 * The GPUs of one node by UUID, as a list: a node holds a handful, and a `Map` of 4 to 8 entries costs
 * about 300 bytes where an exact-length list costs 100, which across 10,000 nodes is 2 MB. A lookup walks
 * the list, a few comparisons of UUIDs. Never changed once built, as the inventory's entries are not.
 */
export class NodeGpus implements ReadonlyMap<string, KnownGpu> {
  private readonly gpus: ReadonlyArray<KnownGpu>

  private constructor(gpus: ReadonlyArray<KnownGpu>) {
    this.gpus = gpus
  }

  /** The node's GPUs of `gpus`, in their order: a list for a handful, the map itself for more. */
  static of(gpus: ReadonlyMap<string, KnownGpu>): ReadonlyMap<string, KnownGpu> {
    if (gpus instanceof NodeGpus || gpus.size > listedAtMost) return gpus
    const list = new Array<KnownGpu>(gpus.size)
    let at = 0
    for (const known of gpus.values()) list[at++] = known
    return new NodeGpus(list)
  }

  get size(): number {
    return this.gpus.length
  }

  get(uuid: string): KnownGpu | undefined {
    for (const known of this.gpus) if (known.uuid === uuid) return known
    return undefined
  }

  has(uuid: string): boolean {
    return this.get(uuid) !== undefined
  }

  *entries(): MapIterator<[string, KnownGpu]> {
    for (const known of this.gpus) yield [known.uuid, known]
  }

  *keys(): MapIterator<string> {
    for (const known of this.gpus) yield known.uuid
  }

  *values(): MapIterator<KnownGpu> {
    yield* this.gpus
  }

  [Symbol.iterator](): MapIterator<[string, KnownGpu]> {
    return this.entries()
  }

  forEach(callback: (value: KnownGpu, key: string, map: ReadonlyMap<string, KnownGpu>) => void): void {
    for (const known of this.gpus) callback(known, known.uuid, this)
  }
}
