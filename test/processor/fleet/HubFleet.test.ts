import { describe, expect, it } from "vitest"
import { type GpuRecord, recordSchema } from "../../../src/domain/GpuRecord.ts"
import type { InventoryEventKind } from "../../../src/domain/InventoryEventKind.ts"
import { recordId } from "../../../src/domain/RecordId.ts"
import {
  emptyHubFleet,
  type HubFleet,
  restoredHubFleet,
  tick,
  transition,
} from "../../../src/processor/fleet/HubFleet.ts"

const day = 24 * 3_600_000
const rules = { windowMs: 30 * day }
const start = Date.parse("2026-03-01T00:00:00Z")

const record = (
  event: InventoryEventKind,
  cluster: string,
  node: string,
  atMs: number,
  uuid = "GPU-1111",
): GpuRecord => {
  const time = new Date(start + atMs).toISOString()
  const machine = `${node}-vm`
  return {
    schema: recordSchema,
    event,
    id: recordId({ cluster, uuid, event, node, machine, time }),
    cluster,
    node,
    machine,
    source: "gpu-operator/nvidia-device-plugin-x",
    chassis: "",
    gpu: "1650123456789",
    time,
    uuid,
    index: 0,
    serialShared: false,
  }
}

const summary = (records: ReadonlyArray<GpuRecord>) =>
  records.map((out) => ({
    event: out.event,
    cluster: out.cluster,
    node: out.node,
    ...(out.previousCluster === undefined ? {} : { previousCluster: out.previousCluster }),
  }))

const seeded = (): HubFleet => {
  const fleet = emptyHubFleet()
  transition(fleet, [record("added", "east", "e-1", 0)], rules)
  return fleet
}

describe("the hub's fleet across clusters", () => {
  it("passes a cluster's records through and places each GPU in its cluster", () => {
    const fleet = emptyHubFleet()
    const added = record("added", "east", "e-1", 0)
    const moved = { ...record("moved", "east", "e-2", 1_000), previousNode: "e-1", previousMachine: "e-1-vm" }
    const step = transition(fleet, [added, moved], rules)
    expect(step.records).toEqual([added, moved])
    expect(fleet.places.get("GPU-1111")).toEqual({ cluster: "east", node: "e-2", machine: "e-2-vm" })
  })

  it("holds a removal, then makes one moved of it and an added in another cluster within the window", () => {
    const fleet = seeded()
    const removal = transition(fleet, [record("removed", "east", "e-1", 1_000)], rules)
    expect(removal.records).toEqual([])
    expect(removal.changes).toContainEqual({ _tag: "Hold", uuid: "GPU-1111", removal: expect.anything() })
    const arrival = transition(fleet, [record("added", "west", "w-7", 5 * day)], rules)
    expect(summary(arrival.records)).toEqual([
      { event: "moved", cluster: "west", node: "w-7", previousCluster: "east" },
    ])
    const [moved] = arrival.records
    expect(moved?.previousNode).toBe("e-1")
    expect(moved?.previousMachine).toBe("e-1-vm")
    expect(fleet.held.size).toBe(0)
    expect(fleet.places.get("GPU-1111")?.cluster).toBe("west")
  })

  it("gives the moved it makes the same id however often the batch comes", () => {
    const batch = [record("added", "west", "w-7", day)]
    const once = seeded()
    transition(once, [record("removed", "east", "e-1", 1_000)], rules)
    const twice = seeded()
    transition(twice, [record("removed", "east", "e-1", 1_000)], rules)
    const first = transition(once, batch, rules).records[0]
    const second = transition(twice, batch, rules).records[0]
    expect(first?.id).toBe(second?.id)
    expect(first?.id).not.toBe(batch[0]?.id)
  })

  it("makes one moved when the new cluster's record comes before the old cluster's removal, and drops that removal", () => {
    const fleet = seeded()
    const arrival = transition(fleet, [record("added", "west", "w-7", 2_000)], rules)
    expect(summary(arrival.records)).toEqual([
      { event: "moved", cluster: "west", node: "w-7", previousCluster: "east" },
    ])
    const late = transition(fleet, [record("removed", "east", "e-1", 1_000)], rules)
    expect(late.records).toEqual([])
    expect(fleet.held.size).toBe(0)
  })

  it("forwards a held removal as the cluster wrote it once the window ends with no sign of the GPU", () => {
    const fleet = seeded()
    const removed = record("removed", "east", "e-1", 1_000)
    transition(fleet, [removed], rules)
    expect(tick(fleet, new Date(start + 1_000 + rules.windowMs - 1), rules).records).toEqual([])
    const due = tick(fleet, new Date(start + 1_000 + rules.windowMs), rules)
    expect(due.records).toEqual([removed])
    expect(due.changes).toEqual([{ _tag: "Release", uuid: "GPU-1111" }])
    expect(tick(fleet, new Date(start + 2 * rules.windowMs), rules).records).toEqual([])
  })

  it("forwards the removal and then the added when the GPU turns up elsewhere after the window", () => {
    const fleet = seeded()
    const removed = record("removed", "east", "e-1", 0)
    transition(fleet, [removed], rules)
    const added = record("added", "west", "w-7", rules.windowMs + 1)
    expect(transition(fleet, [added], rules).records).toEqual([removed, added])
  })

  it("forwards the removal and then the cluster's own record when the GPU comes back in the same cluster", () => {
    const fleet = seeded()
    const removed = record("removed", "east", "e-1", 1_000)
    const back = record("added", "east", "e-3", 2_000)
    expect(transition(fleet, [removed, back], rules).records).toEqual([removed, back])
  })

  it("turns a report or a move in the new cluster into the cross-cluster moved, and forwards a health change after it", () => {
    const fleet = seeded()
    transition(fleet, [record("removed", "east", "e-1", 1_000)], rules)
    const health = { ...record("health", "west", "w-7", 3_000), previousHealthState: "ok" as const }
    const step = transition(fleet, [health], rules)
    expect(summary(step.records)).toEqual([
      { event: "moved", cluster: "west", node: "w-7", previousCluster: "east" },
      { event: "health", cluster: "west", node: "w-7" },
    ])
    expect(step.records[0]?.previousHealthState).toBeUndefined()

    const reported = seeded()
    transition(reported, [record("removed", "east", "e-1", 1_000)], rules)
    expect(summary(transition(reported, [record("observed", "west", "w-7", 3_000)], rules).records)).toEqual([
      { event: "moved", cluster: "west", node: "w-7", previousCluster: "east" },
    ])
  })

  it("keeps GPUs apart by UUID, whatever their serials", () => {
    const fleet = emptyHubFleet()
    transition(fleet, [record("added", "east", "e-1", 0, "GPU-A"), record("added", "east", "e-1", 0, "GPU-B")], rules)
    transition(fleet, [record("removed", "east", "e-1", 1_000, "GPU-A")], rules)
    const step = transition(fleet, [record("added", "west", "w-1", 2_000, "GPU-B")], rules)
    expect(summary(step.records)).toEqual([{ event: "moved", cluster: "west", node: "w-1", previousCluster: "east" }])
    expect(step.records[0]?.uuid).toBe("GPU-B")
    expect([...fleet.held.keys()]).toEqual(["GPU-A"])
  })

  it("restored from its store's changes, makes the same move as the fleet that wrote them", () => {
    const fleet = emptyHubFleet()
    const changes = [
      ...transition(
        fleet,
        [record("added", "east", "e-1", 0, "GPU-A"), record("added", "east", "e-2", 0, "GPU-B")],
        rules,
      ).changes,
      ...transition(fleet, [record("removed", "east", "e-1", 1_000, "GPU-A")], rules).changes,
    ]
    const places = new Map<string, { cluster: string; node: string; machine: string }>()
    const held = new Map<string, GpuRecord>()
    for (const change of changes) {
      if (change._tag === "Place") places.set(change.uuid, change.place)
      if (change._tag === "Forget") places.delete(change.uuid)
      if (change._tag === "Hold") held.set(change.uuid, change.removal)
      if (change._tag === "Release") held.delete(change.uuid)
    }
    const restored = restoredHubFleet({ places, held })
    const batch = [record("added", "west", "w-1", 2_000, "GPU-A"), record("added", "west", "w-2", 2_000, "GPU-B")]
    expect(transition(restored, batch, rules).records).toEqual(transition(fleet, batch, rules).records)
    expect(restored.places.size).toBe(2)
  })

  it("stores a GPU's place only when it changes, not for each report of it where it was", () => {
    const fleet = emptyHubFleet()
    const added = transition(fleet, [record("added", "east", "e-1", 0)], rules)
    expect(added.changes).toEqual([
      { _tag: "Place", uuid: "GPU-1111", place: { cluster: "east", node: "e-1", machine: "e-1-vm" } },
    ])
    const reported = transition(
      fleet,
      [record("observed", "east", "e-1", 60_000), record("health", "east", "e-1", 120_000)],
      rules,
    )
    expect(reported.changes).toEqual([])
    expect(summary(reported.records).map((entry) => entry.event)).toEqual(["observed", "health"])
    const moved = transition(fleet, [record("moved", "east", "e-2", 180_000)], rules)
    expect(moved.changes).toEqual([
      { _tag: "Place", uuid: "GPU-1111", place: { cluster: "east", node: "e-2", machine: "e-2-vm" } },
    ])
  })
})
