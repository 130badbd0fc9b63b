import type { InventoryChange } from "../../../domain/InventoryChange.ts"
import { type LabelledGpu, labelledGpuOf } from "./GpuNodeLabels.ts"

/**
 * The inventory's GPUs by node, as the node labeller follows them from the inventory feed: what it
 * keeps of each GPU is what labels say (UUID, index, serial, chassis).
 */
export class NodeGpuMirror {
  private readonly gpus = new Map<string, LabelledGpu>()
  private readonly byNode = new Map<string, Map<string, LabelledGpu>>()

  /** Applies changes in order; returns the nodes whose GPUs changed (both nodes of a move). */
  apply(changes: Iterable<InventoryChange>): ReadonlySet<string> {
    const touched = new Set<string>()
    for (const change of changes) {
      const held = this.gpus.get(change.uuid)
      if (held !== undefined) {
        this.detach(held)
        touched.add(held.node)
      }
      if (change._tag === "Upsert") {
        const gpu = labelledGpuOf(change.gpu)
        this.gpus.set(gpu.uuid, gpu)
        const onNode = this.byNode.get(gpu.node) ?? new Map<string, LabelledGpu>()
        onNode.set(gpu.uuid, gpu)
        this.byNode.set(gpu.node, onNode)
        touched.add(gpu.node)
      } else {
        touched.add(change.node)
      }
    }
    return touched
  }

  /** The GPUs the inventory holds on `node`. */
  gpusOn(node: string): Iterable<LabelledGpu> {
    return this.byNode.get(node)?.values() ?? []
  }

  /** Whether the inventory holds GPUs on `node`. */
  has(node: string): boolean {
    return this.byNode.has(node)
  }

  private detach(gpu: LabelledGpu): void {
    this.gpus.delete(gpu.uuid)
    const onNode = this.byNode.get(gpu.node)
    onNode?.delete(gpu.uuid)
    if (onNode?.size === 0) this.byNode.delete(gpu.node)
  }
}
