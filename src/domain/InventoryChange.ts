import type { KnownGpu } from "./KnownGpu.ts"

/**
 * A change of the current location of one GPU, as a durable inventory store writes it: the GPU is
 * now (or still) where `gpu` says, or it is gone from `node`.
 */
export type InventoryChange =
  | { readonly _tag: "Upsert"; readonly uuid: string; readonly gpu: KnownGpu }
  | { readonly _tag: "Remove"; readonly uuid: string; readonly node: string }

export const upsert = (gpu: KnownGpu): InventoryChange => ({ _tag: "Upsert", uuid: gpu.uuid, gpu })

export const remove = (gpu: KnownGpu): InventoryChange => ({ _tag: "Remove", uuid: gpu.uuid, node: gpu.node })

/**
 * Changes not written yet, one per UUID: a later change of a GPU replaces an earlier one, so what
 * waits for a store never outgrows the number of GPUs.
 */
export const mergeChanges = (
  earlier: ReadonlyMap<string, InventoryChange>,
  later: Iterable<InventoryChange>,
): ReadonlyMap<string, InventoryChange> => {
  const merged = new Map(earlier)
  for (const change of later) {
    merged.delete(change.uuid)
    merged.set(change.uuid, change)
  }
  return merged
}
