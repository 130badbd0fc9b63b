import { describe, expect, it } from "vitest"
import { type GpuRecord, recordSchema } from "../../src/domain/GpuRecord.ts"
import type { InventoryEventKind } from "../../src/domain/InventoryEventKind.ts"
import { findGpus, type GpuQuery, nodeDetail, parseGpuQuery } from "../../src/fleet/FleetQuery.ts"
import { FleetView } from "../../src/fleet/FleetView.ts"
import { crossClusterMove } from "../../src/processor/fleet/HubFleet.ts"
import { t0 } from "./FleetFixtures.ts"

const record = (event: InventoryEventKind, cluster: string, node: string, uuid: string, minute: number): GpuRecord => ({
  schema: recordSchema,
  event,
  id: `${cluster}-${uuid}-${event}-${minute}`,
  cluster,
  node,
  machine: `${node}-vm`,
  source: "gpu-operator/nvidia-device-plugin-daemonset-abcde",
  chassis: "",
  gpu: `serial-${uuid}`,
  time: new Date(t0.getTime() + minute * 60_000).toISOString(),
  uuid,
  index: 0,
  serialShared: false,
})

const query = (text: string): GpuQuery => parseGpuQuery(new URLSearchParams(text)) as GpuQuery
const found = (view: FleetView, text: string) =>
  findGpus(view, query(text)).items.map((entry) => [entry.known.uuid, view.clusterOf(entry), view.placeOf(entry)])

describe("a hub's FleetView, fed with the hub's records", () => {
  it("keeps one copy of what many GPUs' records repeat: a reading's time, the pod, the node's place", () => {
    const view = new FleetView({ eventCapacity: 0, cluster: "fleet", acrossClusters: true }, t0)
    // Each record decoded from its own JSON, with strings and values of its own, as the hub receives them.
    const decoded = (event: InventoryEventKind, uuid: string, minute: number): GpuRecord =>
      JSON.parse(JSON.stringify(record(event, "east", "n-1", uuid, minute))) as GpuRecord
    view.follow([decoded("added", "GPU-A", 0), decoded("added", "GPU-B", 0)])
    const read = view.gpus.get("GPU-A")?.known.gpu
    view.follow([decoded("observed", "GPU-A", 1), decoded("observed", "GPU-B", 1)])
    // The GPU as read before, when the next record reads the same of it.
    expect(view.gpus.get("GPU-A")?.known.gpu).toBe(read)
    const [a, b] = [view.gpus.get("GPU-A"), view.gpus.get("GPU-B")]
    expect(a?.known.lastSeen).toBe(b?.known.lastSeen)
    expect(a?.known.firstSeen).toBe(b?.known.firstSeen)
    expect(a?.known.pod).toBe(b?.known.pod)
    expect(a?.known.firstSeen.toISOString()).toBe(t0.toISOString())
    expect(a?.known.lastSeen.getTime()).toBe(t0.getTime() + 60_000)
    expect(a?.known.pod).toEqual({ namespace: "gpu-operator", name: "nvidia-device-plugin-daemonset-abcde" })
    expect([a?.place, a?.known.machine, a?.known.gpu.serial]).toEqual(["east/n-1", "n-1-vm", "serial-GPU-A"])
  })

  it("files the same node name of two clusters as two nodes, and orders by cluster", () => {
    const view = new FleetView({ eventCapacity: 0, cluster: "fleet", acrossClusters: true }, t0)
    view.follow([record("added", "west", "n-1", "GPU-B", 0), record("added", "east", "n-1", "GPU-A", 1)])
    expect(found(view, "")).toEqual([
      ["GPU-A", "east", "east/n-1"],
      ["GPU-B", "west", "west/n-1"],
    ])
    expect(view.nodes()).toEqual(["east/n-1", "west/n-1"])
    expect(found(view, "cluster=west")).toEqual([["GPU-B", "west", "west/n-1"]])
    expect(found(view, "node=n-1&cluster=east")).toEqual([["GPU-A", "east", "east/n-1"]])
    expect(nodeDetail(view, "east/n-1")?.cluster).toBe("east")
  })

  it("moves a GPU to its new cluster, keeps when it was first seen, and forgets it at a forwarded removal", () => {
    const view = new FleetView({ eventCapacity: 0, cluster: "fleet", acrossClusters: true }, t0)
    const added = record("added", "east", "n-1", "GPU-A", 0)
    view.follow([added, record("observed", "east", "n-1", "GPU-A", 5)])
    const moved = crossClusterMove(record("added", "west", "n-7", "GPU-A", 10), {
      cluster: "east",
      node: "n-1",
      machine: "n-1-vm",
    })
    view.follow([moved])
    view.record([
      { record: added, origin: {} },
      { record: moved, origin: {} },
    ])
    const entry = view.gpus.get("GPU-A")
    expect([entry?.cluster, entry?.place, entry?.known.firstSeen.toISOString()]).toEqual([
      "west",
      "west/n-7",
      added.time,
    ])
    expect(entry?.since.toISOString()).toBe(moved.time)
    expect(view.nodes()).toEqual(["west/n-7"])
    expect(view.history("GPU-A")?.entries[0]).toMatchObject({
      event: "moved",
      cluster: "west",
      node: "n-7",
      previousCluster: "east",
      previousNode: "n-1",
    })
    view.follow([record("removed", "west", "n-7", "GPU-A", 20)])
    expect(view.gpus.size).toBe(0)
    expect(view.nodes()).toEqual([])
  })

  it("answers a cluster's own view with that cluster, its nodes by name", () => {
    const view = new FleetView({ eventCapacity: 0, cluster: "prod-east" }, t0)
    view.follow([record("added", "prod-east", "n-1", "GPU-A", 0)])
    expect(found(view, "cluster=prod-east")).toEqual([["GPU-A", "prod-east", "n-1"]])
    // The view's cluster and the node's name are the view's to say, not kept with each GPU.
    expect(Object.keys(view.gpus.get("GPU-A") ?? {})).not.toContain("cluster")
    expect(Object.keys(view.gpus.get("GPU-A") ?? {})).not.toContain("place")
    expect(parseGpuQuery(new URLSearchParams("cluster=a.b"))).toMatchObject({
      _tag: "BadParameter",
      parameter: "cluster",
    })
  })
})
