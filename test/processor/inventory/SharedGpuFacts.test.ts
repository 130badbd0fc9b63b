import { describe, expect, it } from "vitest"
import type { Gpu, GpuPlatform } from "../../../src/domain/Gpu.ts"
import { empty, locate, transition } from "../../../src/processor/inventory/Inventory.ts"
import { SharedGpuFacts } from "../../../src/processor/inventory/SharedGpuFacts.ts"
import { at, h100, nodeA, nodeB, read, settings } from "./Observations.ts"

/** A GB200's platform as a parser gives it: an object of its own for every GPU of every reading. */
const platformOf = (chassis: string): GpuPlatform => ({
  chassisSerial: chassis,
  slotNumber: "3",
  trayIndex: "1",
  hostId: "1",
  peerType: "Switch Connected",
  fabricGuid: "0x0000000000000000",
})

const gb200 = (host: string, index: number, chassis: string): Gpu => ({
  ...h100(host, index),
  product: "NVIDIA GB200",
  platform: platformOf(chassis),
  health: { retiredPages: { singleBit: 0, doubleBit: 0, pending: false } },
})

describe("SharedGpuFacts", () => {
  it("keeps the GPU without its health signals, every other fact as read", () => {
    const facts = new SharedGpuFacts(16)
    const { health: _signals, ...expected } = gb200("host-a", 0, "1830124000001")
    const kept = facts.gpu(gb200("host-a", 0, "1830124000001"))
    expect(kept).toEqual(expected)
    expect(Object.keys(kept)).toEqual(Object.keys(expected))
    expect(kept).not.toHaveProperty("health")
  })

  it("keeps one platform object of equal platforms, across GPUs and readings, and never changes it", () => {
    const facts = new SharedGpuFacts(16)
    const first = facts.gpu(gb200("host-a", 0, "1830124000001"))
    const again = facts.gpu(gb200("host-b", 1, "1830124000001"))
    const other = facts.gpu(gb200("host-c", 0, "1830124000002"))
    expect(again.platform).toBe(first.platform)
    expect(other.platform).not.toBe(first.platform)
    expect(other.platform).toEqual(platformOf("1830124000002"))
    expect(Object.isFrozen(first.platform)).toBe(true)
  })

  it("starts anew past its bound, so values a fleet no longer reports are let go", () => {
    const facts = new SharedGpuFacts(4)
    for (let chassis = 0; chassis < 50; chassis++) facts.gpu(gb200("host-a", 0, `18301240000${chassis}`))
    expect(facts.size).toBeLessThanOrEqual(8)
  })

  it("gives the inventory's GPUs of different nodes and readings one platform where their platforms are equal", () => {
    const rules = { ...settings, facts: new SharedGpuFacts(64) }
    const chassis = "1830124000001"
    const first = transition(empty, read(nodeA, at(0), [gb200("host-a", 0, chassis)]), rules).state
    const both = transition(first, read(nodeB, at(1_000), [gb200("host-b", 0, chassis)]), rules).state
    const a = locate(both, h100("host-a", 0).uuid)
    const b = locate(both, h100("host-b", 0).uuid)
    expect(a?.gpu.platform).toEqual(platformOf(chassis))
    expect(b?.gpu.platform).toBe(a?.gpu.platform)
  })
})
