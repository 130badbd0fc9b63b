import { describe, expect, it } from "vitest"
import { type InventoryChange, mergeChanges } from "../../../../src/domain/InventoryChange.ts"
import {
  empty,
  everyKnownGpu,
  type Inventory,
  tick,
  transition,
} from "../../../../src/processor/inventory/Inventory.ts"
import { NodeGpuMirror } from "../../../../src/receiver/kube/nodelabels/NodeGpuMirror.ts"
import { at, h100, minute, nodeA, nodeB, read, settings } from "../../../processor/inventory/Observations.ts"

const nodeC = { name: "gpu-node-c", uid: "uid-c", providerId: "aws:///eu-west-1c/i-0ccc" }

/** A fleet's life in batches of changes: first reads, a swap of GPUs between nodes, a move on, a removal. */
const batches = (): { readonly changes: ReadonlyArray<ReadonlyArray<InventoryChange>>; readonly state: Inventory } => {
  const [a0, a1, a2] = [h100("a", 0), h100("a", 1), h100("a", 2)]
  const [b0, b1] = [h100("b", 0), h100("b", 1)]
  const steps = [
    (state: Inventory) => transition(state, read(nodeA, at(0), [a0, a1, a2]), settings),
    (state: Inventory) => transition(state, read(nodeB, at(1), [b0, b1]), settings),
    // GPU a1 and b0 swap nodes.
    (state: Inventory) => transition(state, read(nodeA, at(minute), [a0, b0, a2]), settings),
    (state: Inventory) => transition(state, read(nodeB, at(minute + 1), [a1, b1]), settings),
    // a1 goes on to node c; b is read without it.
    (state: Inventory) => transition(state, read(nodeC, at(2 * minute), [a1]), settings),
    // a2 leaves node a for good: proved absent, then removed after the grace.
    (state: Inventory) => transition(state, read(nodeA, at(3 * minute), [a0, b0]), settings),
    (state: Inventory) => tick(state, at(9 * minute), settings),
  ]
  let state = empty
  const changes: Array<ReadonlyArray<InventoryChange>> = []
  for (const step of steps) {
    const next = step(state)
    state = next.state
    changes.push(next.changes)
  }
  return { changes, state }
}

/** The mirror's GPUs by node, as UUID lists sorted. */
const mirrored = (mirror: NodeGpuMirror, nodes: ReadonlyArray<string>) =>
  Object.fromEntries(
    nodes
      .filter((node) => mirror.has(node))
      .map((node) => [
        node,
        mirror
          .gpusOn(node)
          .map((gpu) => gpu.uuid)
          .sort(),
      ]),
  )

const inventoryByNode = (state: Inventory) => {
  const byNode: Record<string, Array<string>> = {}
  for (const known of everyKnownGpu(state)) byNode[known.node] = [...(byNode[known.node] ?? []), known.uuid]
  for (const uuids of Object.values(byNode)) uuids.sort()
  return byNode
}

describe("NodeGpuMirror", () => {
  const nodes = [nodeA.name, nodeB.name, nodeC.name]

  it("follows moves and removals batch by batch, with the nodes each batch touched", () => {
    const { changes, state } = batches()
    const mirror = new NodeGpuMirror()
    const touched = changes.map((batch) => [...mirror.apply(batch)].sort())
    expect(mirrored(mirror, nodes)).toEqual(inventoryByNode(state))
    // The swap touches both nodes; the move to c touches b, which it left.
    expect(touched[2]).toEqual([nodeA.name, nodeB.name])
    expect(touched[4]).toEqual([nodeB.name, nodeC.name])
    expect(mirror.has(nodeA.name)).toBe(true)
  })

  it("ends where the inventory is when the feed merged batches it did not take, at any cut", () => {
    const { changes, state } = batches()
    for (let cut = 0; cut <= changes.length; cut++) {
      for (let second = cut; second <= changes.length; second++) {
        const mirror = new NodeGpuMirror()
        const merged = (from: number, to: number) =>
          mirror.apply(mergeChanges(new Map(), changes.slice(from, to).flat()).values())
        merged(0, cut)
        merged(cut, second)
        merged(second, changes.length)
        expect(mirrored(mirror, nodes), `cuts ${cut}, ${second}`).toEqual(inventoryByNode(state))
      }
    }
  })

  it("replaces a GPU read again on its node in place, keeping the node's order", () => {
    const { changes } = batches()
    const mirror = new NodeGpuMirror()
    mirror.apply(changes[0] ?? [])
    const before = mirror.gpusOn(nodeA.name).map((gpu) => gpu.uuid)
    mirror.apply(transition(empty, read(nodeA, at(0), [h100("a", 1)]), settings).changes)
    expect(mirror.gpusOn(nodeA.name).map((gpu) => gpu.uuid)).toEqual(before)
  })
})
