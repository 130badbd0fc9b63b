import { describe, expect, it } from "vitest"
import type { KnownGpu } from "../../../src/domain/KnownGpu.ts"
import { empty, locate, transition } from "../../../src/processor/inventory/Inventory.ts"
import { NodeGpus } from "../../../src/processor/inventory/NodeGpus.ts"
import { at, hostGpus, nodeA, read, settings } from "./Observations.ts"

const knownOf = (count: number): ReadonlyMap<string, KnownGpu> => {
  const state = transition(empty, read(nodeA, at(0), hostGpus("host-a", count)), settings).state
  const gpus = new Map<string, KnownGpu>()
  for (const gpu of hostGpus("host-a", count)) {
    const known = locate(state, gpu.uuid)
    if (known !== undefined) gpus.set(gpu.uuid, known)
  }
  return gpus
}

describe("NodeGpus", () => {
  it("answers as the map it was built from: sizes, lookups and the order of every walk", () => {
    const map = knownOf(8)
    const list = NodeGpus.of(map)
    expect(list).toBeInstanceOf(NodeGpus)
    expect(list.size).toBe(8)
    expect([...list]).toEqual([...map])
    expect([...list.keys()]).toEqual([...map.keys()])
    expect([...list.values()]).toEqual([...map.values()])
    const walked: Array<string> = []
    list.forEach((known, uuid) => {
      walked.push(`${uuid}=${known.gpu.index}`)
    })
    expect(walked).toEqual([...map].map(([uuid, known]) => `${uuid}=${known.gpu.index}`))
    for (const [uuid, known] of map) {
      expect(list.get(uuid)).toBe(known)
      expect(list.has(uuid)).toBe(true)
    }
    expect(list.get("GPU-none")).toBeUndefined()
    expect(list.has("GPU-none")).toBe(false)
    expect(NodeGpus.of(list)).toBe(list)
  })

  it("leaves a node of many GPUs in its map, where a walk would cost more than a lookup", () => {
    const map = knownOf(40)
    expect(NodeGpus.of(map)).toBe(map)
  })

  it("is how the inventory holds a node's GPUs", () => {
    const state = transition(empty, read(nodeA, at(0), hostGpus("host-a", 4)), settings).state
    expect(state.nodes.get(nodeA.name)?.gpus).toBeInstanceOf(NodeGpus)
  })
})
