import { describe, expect, it } from "vitest"
import { Fleet } from "../../src/catalog/Fleet.ts"
import { fleetModelNames } from "../../src/catalog/GpuModel.ts"

const fleetOf = (nodes: number, seed: string | number = "fleet-test", modelMix = {}) =>
  Fleet.generate({ nodes, seed, modelMix, clusterName: "test" })

const snapshot = (fleet: Fleet) =>
  [...fleet.hosts.values()].map((host) => ({
    name: host.machine.nodeName,
    providerId: host.machine.providerId,
    gpus: host.gpus.map((gpu) => [gpu.identity.uuid, gpu.identity.serial, gpu.slot.pciBusId]),
  }))

describe("the GPU fleet catalog", () => {
  it("is the same cluster for the same seed and another for another seed", () => {
    expect(snapshot(fleetOf(40))).toEqual(snapshot(fleetOf(40)))
    expect(snapshot(fleetOf(40, "other seed"))).not.toEqual(snapshot(fleetOf(40)))
  })

  it("gives a small cluster every model and several clouds", () => {
    const hosts = [...fleetOf(12).hosts.values()]
    expect(new Set(hosts.map((host) => host.fleetModel))).toEqual(new Set(fleetModelNames))
    expect(new Set(hosts.map((host) => host.pool.cloud)).size).toBeGreaterThanOrEqual(4)
    expect(hosts.filter((host) => host.machine.providerId === "")).toHaveLength(1)
  })

  it("makes 13-digit serials (some with a leading zero), N/A on consumer cards, unique UUIDs", () => {
    const hosts = [...fleetOf(400).hosts.values()]
    const gpus = hosts.flatMap((host) => host.gpus.map((gpu) => ({ host, gpu })))
    for (const { host, gpu } of gpus) {
      if (host.model.name === "rtx4090") expect(gpu.identity.serial).toBe("N/A")
      else expect(gpu.identity.serial).toMatch(/^\d{13}$/)
      expect(gpu.identity.uuid).toMatch(/^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    }
    expect(gpus.filter(({ gpu }) => /^0[1-9]/.test(gpu.identity.serial)).length).toBeGreaterThan(0)
    expect(new Set(gpus.map(({ gpu }) => gpu.identity.uuid)).size).toBe(gpus.length)
  })

  it("builds GB200 trays with one serial per two-GPU module and racks sharing a chassis serial", () => {
    const trays = [...fleetOf(40, "racks", { "gb200-nvl72": 1 }).hosts.values()]
    for (const tray of trays) {
      const serials = tray.gpus.map((gpu) => gpu.identity.serial)
      expect(serials[0]).toBe(serials[1])
      expect(serials[2]).toBe(serials[3])
      expect(serials[0]).not.toBe(serials[2])
      expect(tray.gpus.map((gpu) => gpu.slot.moduleId)).toEqual([2, 1, 4, 3])
    }
    const chassis = new Map<string, number>()
    for (const tray of trays)
      chassis.set(tray.rack?.chassisSerial ?? "", (chassis.get(tray.rack?.chassisSerial ?? "") ?? 0) + 1)
    expect([...chassis.values()].sort((a, b) => b - a)).toEqual([18, 18, 4])
  })

  it("numbers HGX modules out of PCI order", () => {
    const host = [...fleetOf(4, "hgx", { "h100-hgx": 1 }).hosts.values()][0]
    const moduleIds = host?.gpus.map((gpu) => gpu.slot.moduleId) ?? []
    expect([...moduleIds].sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(moduleIds).not.toEqual([1, 2, 3, 4, 5, 6, 7, 8])
  })

  it("swaps GPU boards between hosts, whole modules on GB200", () => {
    const fleet = fleetOf(4, "swap", { "h100-hgx": 1 })
    const [first, second] = [...fleet.hosts.values()]
    if (first === undefined || second === undefined) throw new Error("two hosts expected")
    const [a, b] = [first.gpus[3]?.identity.uuid, second.gpus[3]?.identity.uuid]
    expect(fleet.swapGpus(first, second, 3)).toEqual([b, a])
    expect(first.gpus[3]?.identity.uuid).toBe(b)
    expect(second.gpus[3]?.identity.uuid).toBe(a)

    const racks = fleetOf(4, "swap", { "gb200-nvl72": 1 })
    const [x, y] = [...racks.hosts.values()]
    if (x === undefined || y === undefined) throw new Error("two trays expected")
    const module = x.gpus[1]?.identity.serial
    expect(racks.swapGpus(x, y, 1)).toHaveLength(4)
    expect(y.gpus.slice(0, 2).map((gpu) => gpu.identity.serial)).toEqual([module, module])
  })
})
