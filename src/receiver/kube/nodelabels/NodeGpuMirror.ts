import type { InventoryChange } from "../../../domain/InventoryChange.ts"
import type { KnownGpu } from "../../../domain/KnownGpu.ts"
import { type LabelledGpu, labelledGpuOf } from "./GpuNodeLabels.ts"

/**
 * The inventory's GPUs by node, as the node labeller follows them from the inventory feed. It keeps the
 * feed's own entry of each GPU, the object the inventory and the fleet view hold too, and takes what
 * labels say of it (UUID, index, serial, chassis) only when a node's labels are worked out: a copy per
 * GPU would cost the mirror about as much again as the maps that find them. It keeps no map by UUID
 * either: a change names the node a GPU left (`from`, a `Remove`'s `node`), and a node holds a handful.
 */
export class NodeGpuMirror {
  /** A node's GPUs in the order they came: a node holds a handful, so a list is smaller than a map. */
  private readonly byNode = new Map<string, Array<KnownGpu>>()

  /** Applies changes in order; returns the nodes whose GPUs changed (both nodes of a move). */
  apply(changes: Iterable<InventoryChange>): ReadonlySet<string> {
    const touched = new Set<string>()
    for (const change of changes) {
      if (change._tag === "Remove") {
        this.detach(change.node, change.uuid)
        touched.add(change.node)
        continue
      }
      const gpu = change.gpu
      if (change.from !== undefined) {
        this.detach(change.from, gpu.uuid)
        touched.add(change.from)
      }
      const onNode = this.byNode.get(gpu.node)
      const at = onNode === undefined ? -1 : onNode.findIndex((held) => held.uuid === gpu.uuid)
      if (onNode !== undefined && at >= 0) onNode[at] = gpu
      // A copy of the exact length: an array pushed or spread to keeps room for 16 more.
      else this.byNode.set(gpu.node, (onNode ?? []).concat(gpu))
      touched.add(gpu.node)
    }
    return touched
  }

  /** The GPUs the inventory holds on `node`, as labels describe them. */
  gpusOn(node: string): ReadonlyArray<LabelledGpu> {
    return (this.byNode.get(node) ?? []).map(labelledGpuOf)
  }

  /** Whether the inventory holds GPUs on `node`. */
  has(node: string): boolean {
    return this.byNode.has(node)
  }

  private detach(node: string, uuid: string): void {
    const onNode = this.byNode.get(node)
    if (onNode === undefined) return
    const at = onNode.findIndex((held) => held.uuid === uuid)
    if (at >= 0) onNode.splice(at, 1)
    if (onNode.length === 0) this.byNode.delete(node)
  }
}
