import type { KnownGpu } from "./KnownGpu.ts"

/**
 * A change of the current location of one GPU, as a durable inventory store writes it: the GPU is
 * now (or still) where `gpu` says, or it is gone from `node`.
 */
export type InventoryChange =
  | {
      readonly _tag: "Upsert"
      readonly uuid: string
      readonly gpu: KnownGpu
      /**
       * The node the GPU was on before, when it came from another one: a reader that files GPUs by node
       * takes it out of there without a map of every GPU by UUID. Stores, which key by UUID, ignore it.
       */
      readonly from?: string
    }
  | { readonly _tag: "Remove"; readonly uuid: string; readonly node: string }

export const upsert = (gpu: KnownGpu): InventoryChange => ({ _tag: "Upsert", uuid: gpu.uuid, gpu })

/** The GPU is now where `gpu` says, after `from`: a move when that is another node. */
export const upsertFrom = (gpu: KnownGpu, from: string): InventoryChange =>
  from === gpu.node ? upsert(gpu) : { _tag: "Upsert", uuid: gpu.uuid, gpu, from }

export const remove = (gpu: KnownGpu): InventoryChange => ({ _tag: "Remove", uuid: gpu.uuid, node: gpu.node })

/**
 * The node a reader that has not taken `change` yet files its GPU under: where it was before the change
 * (for a GPU new to the reader, the node it arrives on, which holds nothing of it yet).
 */
const nodeBefore = (change: InventoryChange): string =>
  change._tag === "Remove" ? change.node : (change.from ?? change.gpu.node)

/**
 * One change that says to a reader what `earlier` then `later`, two changes of one GPU, say together: the
 * GPU is where `later` puts it, and gone from where the reader had it before `earlier`.
 */
export const followedBy = (earlier: InventoryChange | undefined, later: InventoryChange): InventoryChange => {
  if (earlier === undefined) return later
  const before = nodeBefore(earlier)
  if (later._tag === "Upsert") return upsertFrom(later.gpu, before)
  return later.node === before ? later : { ...later, node: before }
}

/**
 * Changes not written yet, one per UUID: a later change of a GPU replaces an earlier one (`followedBy`),
 * so what waits for a store never outgrows the number of GPUs.
 */
export const mergeChanges = (
  earlier: ReadonlyMap<string, InventoryChange>,
  later: Iterable<InventoryChange>,
): ReadonlyMap<string, InventoryChange> => {
  const merged = new Map(earlier)
  for (const change of later) {
    const before = merged.get(change.uuid)
    merged.delete(change.uuid)
    merged.set(change.uuid, followedBy(before, change))
  }
  return merged
}
