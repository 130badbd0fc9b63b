import { describe, expect, it } from "vitest"
import { upsert } from "../../src/domain/InventoryChange.ts"
import {
  findEvents,
  findGpus,
  findNodes,
  type GpuQuery,
  isBadParameter,
  nodeDetail,
  parseEventQuery,
  parseGpuQuery,
  parseNodeQuery,
} from "../../src/fleet/FleetQuery.ts"
import { FleetView } from "../../src/fleet/FleetView.ts"
import { eventOf, knownGpu, t0 } from "./FleetFixtures.ts"

const fleet = () => {
  const view = new FleetView({ eventCapacity: 4 }, t0)
  view.apply([
    upsert(knownGpu({ uuid: "GPU-bbbb0001", node: "node-b", index: 1, serial: "1650924000002", state: "ok" })),
    upsert(knownGpu({ uuid: "GPU-aaaa0001", node: "node-b", index: 0, serial: "1650924000001", state: "failed" })),
    upsert(
      knownGpu({ uuid: "GPU-cccc0001", node: "node-a", index: 0, serial: "1320000000001", chassis: "1821524000001" }),
    ),
    upsert(
      knownGpu({
        uuid: "GPU-dddd0001",
        node: "tray-7",
        index: 0,
        chassis: "1821524000001",
        product: "NVIDIA GB200",
        state: "degraded",
      }),
    ),
  ])
  return view
}

const query = (text: string): GpuQuery => {
  const parsed = parseGpuQuery(new URLSearchParams(text))
  if (isBadParameter(parsed)) throw new Error(parsed.message)
  return parsed
}

const uuids = (view: FleetView, text: string) => findGpus(view, query(text)).items.map((entry) => entry.known.uuid)

describe("GPU search", () => {
  it("lists every GPU by node, then index, then UUID", () => {
    expect(uuids(fleet(), "")).toEqual(["GPU-cccc0001", "GPU-aaaa0001", "GPU-bbbb0001", "GPU-dddd0001"])
  })

  it("takes q as a case-insensitive prefix of serial, UUID with or without GPU-, node or chassis", () => {
    const view = fleet()
    expect(uuids(view, "q=165092400000")).toEqual(["GPU-aaaa0001", "GPU-bbbb0001"])
    expect(uuids(view, "q=AAAA")).toEqual(["GPU-aaaa0001"])
    expect(uuids(view, "q=gpu-bbbb")).toEqual(["GPU-bbbb0001"])
    expect(uuids(view, "q=NODE-A")).toEqual(["GPU-cccc0001"])
    expect(uuids(view, "q=18215")).toEqual(["GPU-cccc0001", "GPU-dddd0001"])
    expect(uuids(view, "q=gp")).toHaveLength(4)
    expect(uuids(view, "q=zzz")).toEqual([])
  })

  it("filters exactly by serial, uuid, node and chassis, by model substring and by health", () => {
    const view = fleet()
    expect(uuids(view, "serial=1650924000002")).toEqual(["GPU-bbbb0001"])
    expect(uuids(view, "serial=165092400000")).toEqual([])
    expect(uuids(view, "uuid=gpu-AAAA0001")).toEqual(["GPU-aaaa0001"])
    expect(uuids(view, "node=node-b")).toEqual(["GPU-aaaa0001", "GPU-bbbb0001"])
    expect(uuids(view, "chassis=1821524000001&q=tray")).toEqual(["GPU-dddd0001"])
    expect(uuids(view, "model=gb200")).toEqual(["GPU-dddd0001"])
    expect(uuids(view, "health=failed,degraded")).toEqual(["GPU-aaaa0001", "GPU-dddd0001"])
    expect(uuids(view, "health=unknown")).toEqual(["GPU-cccc0001"])
  })

  it("pages with an opaque cursor and says the total", () => {
    const view = fleet()
    const first = findGpus(view, query("limit=3"))
    expect(first.total).toBe(4)
    expect(first.items).toHaveLength(3)
    const second = findGpus(view, query(`limit=3&cursor=${first.nextCursor}`))
    expect(second.items.map((entry) => entry.known.uuid)).toEqual(["GPU-dddd0001"])
    expect(second.nextCursor).toBeUndefined()
  })

  it("follows moves and removals, and keeps when a GPU arrived on its node", () => {
    const view = fleet()
    const later = new Date(t0.getTime() + 60_000)
    view.apply([
      upsert(knownGpu({ uuid: "GPU-aaaa0001", node: "node-c", index: 3, serial: "1650924000001", seen: later })),
      { _tag: "Remove", uuid: "GPU-bbbb0001", node: "node-b" },
    ])
    expect(uuids(view, "node=node-b")).toEqual([])
    expect(uuids(view, "q=node-c")).toEqual(["GPU-aaaa0001"])
    expect(view.gpus.get("GPU-aaaa0001")?.since).toEqual(later)
    expect(view.gpus.get("GPU-cccc0001")?.since).toEqual(t0)
    expect(findNodes(view, { failing: false, limit: 10 }).items.map((node) => node.name)).toEqual([
      "node-a",
      "node-c",
      "tray-7",
    ])
  })
})

describe("query parameters", () => {
  it.each([
    ["limit=0", "limit"],
    ["limit=1001", "limit"],
    ["limit=ten", "limit"],
    ["health=sick", "health"],
    ["cursor=%%%", "cursor"],
    ["serail=1", "serail"],
    ["q=a&q=b", "q"],
  ])("refuses %s naming %s", (text, parameter) => {
    const parsed = parseGpuQuery(new URLSearchParams(text))
    expect(isBadParameter(parsed) && parsed.parameter).toBe(parameter)
  })

  it("refuses a bad failing, kind or since", () => {
    const failing = parseNodeQuery(new URLSearchParams("failing=yes"))
    expect(isBadParameter(failing) && failing.parameter).toBe("failing")
    const kind = parseEventQuery(new URLSearchParams("kind=moved,teleported"), 10)
    expect(isBadParameter(kind) && kind.parameter).toBe("kind")
    const since = parseEventQuery(new URLSearchParams("since=yesterday"), 10)
    expect(isBadParameter(since) && since.parameter).toBe("since")
    const limit = parseEventQuery(new URLSearchParams("limit=11"), 10)
    expect(isBadParameter(limit) && limit.parameter).toBe("limit")
  })
})

describe("nodes, events and history", () => {
  it("says a node's GPUs by index, health counts, chassis and its last reading", () => {
    const view = fleet()
    view.observe({
      _tag: "NodeReadFailed",
      node: { name: "node-b" },
      pod: { namespace: "gpu-operator", name: "p" },
      time: new Date(t0.getTime() + 1000),
      failure: { kind: "exec-timeout", message: "nvidia-smi did not answer within 30s" },
    })
    view.observe({
      _tag: "NodeReadFailed",
      node: { name: "node-empty", providerId: "aws:///us-east-1a/i-0abc" },
      pod: { namespace: "gpu-operator", name: "q" },
      time: t0,
      failure: { kind: "nvml-error", message: "driver not loaded" },
    })
    const node = nodeDetail(view, "node-b")
    expect(node?.gpus.map((gpu) => gpu.index)).toEqual([0, 1])
    expect(node?.health).toEqual({ ok: 1, degraded: 0, failed: 1, unknown: 0 })
    expect(node?.lastReading).toEqual({
      time: "2026-01-02T03:00:01.000Z",
      result: "failed",
      failureKind: "exec-timeout",
    })
    expect(node?.failure).toEqual({ kind: "exec-timeout", reason: "nvidia-smi did not answer within 30s" })
    expect(nodeDetail(view, "tray-7")?.chassis).toEqual(["1821524000001"])
    expect(nodeDetail(view, "nowhere")).toBeUndefined()
    expect(findNodes(view, { failing: true, limit: 10 }).items.map((item) => [item.name, item.machine])).toEqual([
      ["node-b", "i-node-b"],
      ["node-empty", "i-0abc"],
    ])
  })

  it("keeps the last events in a ring, newest first, and each GPU's moves and health changes", () => {
    const view = fleet()
    const gpu = knownGpu({ uuid: "GPU-aaaa0001", node: "node-b", index: 0 })
    const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000)
    view.record([
      eventOf(gpu, "added", at(0)),
      eventOf(gpu, "observed", at(1)),
      eventOf({ ...gpu, node: "node-c" }, "moved", at(2), { previousNode: "node-b", previousMachine: "i-node-b" }),
      eventOf(gpu, "health", at(3), { previousHealthState: "ok" }),
      eventOf(gpu, "observed", at(4)),
    ])
    expect(findEvents(view, { limit: 10 }).map((record) => record.event)).toEqual([
      "observed",
      "health",
      "moved",
      "observed",
    ])
    expect(findEvents(view, { limit: 10, kinds: new Set(["moved"]) }).map((record) => record.node)).toEqual(["node-c"])
    expect(findEvents(view, { limit: 10, since: at(3).getTime() })).toHaveLength(2)
    const history = view.history("GPU-aaaa0001")
    expect(history?.entries.map((entry) => entry.event)).toEqual(["health", "moved", "added"])
    expect(history?.entries[1]).toMatchObject({ node: "node-c", previousNode: "node-b", previousMachine: "i-node-b" })
    expect(history?.dropped).toBe(false)
  })
})
