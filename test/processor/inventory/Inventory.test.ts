import { describe, expect, it } from "vitest"
import type { Gpu } from "../../../src/domain/Gpu.ts"
import type { KnownGpu } from "../../../src/domain/KnownGpu.ts"
import {
  empty,
  fromKnown,
  type Inventory,
  inventorySnapshot,
  locate,
  tick,
  transition,
} from "../../../src/processor/inventory/Inventory.ts"
import {
  at,
  failed,
  gone,
  h100,
  hostGpus,
  hour,
  kinds,
  listed,
  minute,
  nodeA,
  nodeB,
  ofKind,
  podOf,
  read,
  run,
  settings,
  tickAt,
} from "./Observations.ts"

/** Every GPU the inventory knows, by node name and then index. */
const knownGpus = (state: Inventory): ReadonlyArray<KnownGpu> =>
  [...state.nodes.values()]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => [...entry.gpus.values()].sort((a, b) => a.gpu.index - b.gpu.index))

const gpusA = hostGpus("a")
const gpusB = hostGpus("b")

describe("Inventory: first sight", () => {
  it("reports each GPU of a first reading as added, with the reading's node, machine, pod and time", () => {
    const step = transition(empty, read(nodeA, at(0), gpusA), settings)

    expect(kinds(step.events)).toEqual(Array(8).fill("added"))
    expect(step.events.map((event) => event.record.uuid)).toEqual(gpusA.map((gpu) => gpu.uuid))
    expect(step.events[0]?.record).toMatchObject({
      schema: "gpu-serials/v1",
      event: "added",
      cluster: "prod-eu",
      node: "gpu-node-a",
      machine: "i-0aaa",
      providerId: "aws:///eu-west-1a/i-0aaa",
      source: "gpu-operator/nvidia-device-plugin-daemonset-gpu-node-a-x1",
      gpu: gpusA[0]?.serial,
      time: at(0).toISOString(),
      driverVersion: "570.148.08",
      cudaVersion: "12.8",
      serialShared: false,
    })
    expect(step.events[0]?.origin).toEqual({
      nodeUid: "uid-a",
      podNamespace: "gpu-operator",
      podName: "nvidia-device-plugin-daemonset-gpu-node-a-x1",
    })
    expect(step.changes.map((change) => change._tag)).toEqual(Array(8).fill("Upsert"))
    expect(inventorySnapshot(step.state)).toEqual({ gpus: 8, nodes: 1, gpusByModel: { "NVIDIA H100 80GB HBM3": 8 } })
  })

  it("says nothing and persists nothing when the same reading comes again", () => {
    const first = transition(empty, read(nodeA, at(0), gpusA), settings)
    const again = transition(first.state, read(nodeA, at(10 * minute), gpusA), settings)

    expect(again.events).toEqual([])
    expect(again.changes).toEqual([])
  })

  it("exports a node without providerID with machine na", () => {
    const bare = { name: "on-prem-7" }
    const { events } = run([read(bare, at(0), [h100("p", 0)])])

    expect(events).toHaveLength(1)
    expect(events[0]?.record).toMatchObject({ event: "added", node: "on-prem-7", machine: "na" })
    expect(events[0]?.record.providerId).toBeUndefined()
    expect(events[0]?.origin).toEqual({
      podNamespace: "gpu-operator",
      podName: "nvidia-device-plugin-daemonset-on-prem-7-x1",
    })
  })

  it("keeps GPUs that share a serial apart: a GB200 tray is four GPUs", () => {
    const module = (index: number, serial: string): Gpu => ({
      index,
      uuid: `GPU-gb200-${index}-0000-0000-000000000000`,
      serial,
      product: "NVIDIA GB200",
      moduleId: index + 1,
      platform: { chassisSerial: "1821225190819", slotNumber: "15", trayIndex: "5" },
    })
    const tray = [
      module(0, "1761025346615"),
      module(1, "1761025346615"),
      module(2, "1761025346616"),
      module(3, "1761025346616"),
    ]
    const { state, events } = run([read(nodeA, at(0), tray), read(nodeA, at(minute), tray)])

    expect(kinds(events)).toEqual(["added", "added", "added", "added"])
    expect(new Set(events.map((event) => event.record.uuid)).size).toBe(4)
    expect(new Set(events.map((event) => event.record.id)).size).toBe(4)
    expect(events.every((event) => event.record.serialShared && event.record.chassis === "1821225190819")).toBe(true)
    expect(knownGpus(state).map((known) => known.uuid)).toEqual(tray.map((gpu) => gpu.uuid))
  })
})

describe("Inventory: periodic reports", () => {
  it("re-affirms unchanged GPUs read again once per report interval", () => {
    const { events } = run([
      read(nodeA, at(0), gpusA),
      read(nodeA, at(hour - 1), gpusA),
      read(nodeA, at(hour), gpusA),
      read(nodeA, at(hour + 30 * minute), gpusA),
      read(nodeA, at(2 * hour), gpusA),
    ])

    const observed = ofKind(events, "observed")
    expect(observed).toHaveLength(16)
    expect(observed.slice(0, 8).every((event) => event.record.time === at(hour).toISOString())).toBe(true)
    expect(observed.slice(8).every((event) => event.record.time === at(2 * hour).toISOString())).toBe(true)
  })

  it("re-affirms every known GPU from tick, without a new reading, once per interval", () => {
    const start = run([read(nodeA, at(0), gpusA), read(nodeB, at(10 * minute), gpusB)])

    const early = tick(start.state, at(hour - 1), settings)
    expect(early.events).toEqual([])
    expect(early.state).toBe(start.state)

    const first = tick(start.state, at(hour), settings)
    expect(kinds(first.events)).toEqual(Array(8).fill("observed"))
    expect(first.events.every((event) => event.record.node === "gpu-node-a")).toBe(true)
    expect(first.events[0]?.record.time).toBe(at(hour).toISOString())
    expect(first.events[0]?.record.source).toBe("gpu-operator/nvidia-device-plugin-daemonset-gpu-node-a-x1")

    const second = tick(first.state, at(hour + 10 * minute), settings)
    expect(ofKind(second.events, "observed").map((event) => event.record.node)).toEqual(Array(8).fill("gpu-node-b"))

    expect(tick(second.state, at(hour + 11 * minute), settings).events).toEqual([])
    expect(tick(second.state, at(2 * hour), settings).events).toHaveLength(8)
  })

  it("never re-affirms when the report interval is 0", () => {
    const quiet = { ...settings, reportIntervalMs: 0 }
    const { events } = run([read(nodeA, at(0), gpusA), read(nodeA, at(48 * hour), gpusA), tickAt(at(96 * hour))], {
      settings: quiet,
    })

    expect(kinds(events)).toEqual(Array(8).fill("added"))
  })

  it("reports changed facts as observed at once", () => {
    const { events } = run([
      read(nodeA, at(0), gpusA),
      read(nodeA, at(minute), gpusA, { driverVersion: "575.51.03" }),
      read(nodeA, at(2 * minute), gpusA, { driverVersion: "575.51.03" }),
    ])

    const observed = ofKind(events, "observed")
    expect(observed).toHaveLength(8)
    expect(observed.every((event) => event.record.driverVersion === "575.51.03")).toBe(true)
  })
})

describe("Inventory: nodes and pods that go", () => {
  it("says nothing when a device-plugin pod restarts within the grace", () => {
    const newPod = podOf(nodeA, "y2")
    const { state, events } = run([
      read(nodeA, at(0), gpusA),
      gone(nodeA, at(minute)),
      read(nodeA, at(minute + 20_000), gpusA, { pod: newPod }),
      tickAt(at(30 * minute)),
    ])

    expect(kinds(events)).toEqual(Array(8).fill("added"))
    expect(locate(state, gpusA[0]?.uuid ?? "")?.pod).toEqual(newPod)
    const report = tick(state, at(hour + minute), settings)
    expect(report.events[0]?.record.source).toBe(`gpu-operator/${newPod.name}`)
  })

  it("removes each GPU of a node gone past the grace, once, at the time it decides so", () => {
    const start = run([read(nodeA, at(0), gpusA), read(nodeB, at(0), gpusB), gone(nodeA, at(minute), "node-deleted")])
    expect(start.events).toHaveLength(16)

    expect(tick(start.state, at(6 * minute - 1), settings).events).toEqual([])
    const removal = tick(start.state, at(6 * minute), settings)
    expect(kinds(removal.events)).toEqual(Array(8).fill("removed"))
    expect(removal.events.map((event) => event.record.uuid)).toEqual(gpusA.map((gpu) => gpu.uuid))
    expect(removal.events[0]?.record).toMatchObject({
      node: "gpu-node-a",
      machine: "i-0aaa",
      time: at(6 * minute).toISOString(),
    })
    expect(removal.changes.map((change) => change._tag)).toEqual(Array(8).fill("Remove"))
    expect(tick(removal.state, at(7 * minute), settings).events).toEqual([])
    expect(inventorySnapshot(removal.state)).toMatchObject({ gpus: 8, nodes: 1 })
  })

  it("does not let a reading taken before the gone news cancel the removal", () => {
    const { events } = run([
      read(nodeA, at(0), gpusA),
      gone(nodeA, at(2 * minute)),
      read(nodeA, at(minute), gpusA),
      tickAt(at(7 * minute)),
    ])

    expect(ofKind(events, "removed")).toHaveLength(8)
  })

  it("ignores gone news older than a reading already applied", () => {
    const { events } = run([
      read(nodeA, at(0), gpusA),
      read(nodeA, at(2 * minute), gpusA, { pod: podOf(nodeA, "y2") }),
      gone(nodeA, at(minute)),
      tickAt(at(30 * minute)),
    ])

    expect(ofKind(events, "removed")).toEqual([])
  })

  it("keeps a node's GPUs when the pod that replaced its deleted one is attempted and fails", () => {
    const { events } = run([
      read(nodeA, at(0), gpusA),
      gone(nodeA, at(minute)),
      failed(nodeA, at(minute + 1_000), podOf(nodeA, "y2")),
      tickAt(at(30 * minute)),
    ])

    expect(ofKind(events, "removed")).toEqual([])
  })

  it("still removes a node's GPUs when only the deleted pod itself, or a pod of a deleted node, fails after the news", () => {
    const deletedPodFailed = run([
      read(nodeA, at(0), gpusA),
      gone(nodeA, at(minute)),
      failed(nodeA, at(minute + 1_000)),
      tickAt(at(7 * minute)),
    ])
    expect(ofKind(deletedPodFailed.events, "removed")).toHaveLength(8)

    const nodeDeleted = run([
      read(nodeA, at(0), gpusA),
      gone(nodeA, at(minute), "node-deleted"),
      failed(nodeA, at(minute + 1_000), podOf(nodeA, "y2")),
      tickAt(at(7 * minute)),
    ])
    expect(ofKind(nodeDeleted.events, "removed")).toHaveLength(8)
  })

  it("changes nothing on a failed reading", () => {
    const start = run([read(nodeA, at(0), gpusA)])
    const step = transition(start.state, failed(nodeA, at(minute)), settings)

    expect(step.events).toEqual([])
    expect(step.changes).toEqual([])
    expect(knownGpus(step.state)).toEqual(knownGpus(start.state))
    expect(tick(step.state, at(30 * minute), settings).events).toEqual([])
  })
})

describe("Inventory: GPUs a reading no longer reports", () => {
  const seven = gpusA.slice(1)

  it("removes a GPU complete readings stop reporting once it has been missing for the grace", () => {
    const start = run([read(nodeA, at(0), gpusA), read(nodeA, at(minute), seven)])
    expect(kinds(start.events)).toEqual(Array(8).fill("added"))

    expect(tick(start.state, at(6 * minute - 1), settings).events).toEqual([])
    const removal = tick(start.state, at(6 * minute), settings)
    expect(kinds(removal.events)).toEqual(["removed"])
    expect(removal.events[0]?.record).toMatchObject({ uuid: gpusA[0]?.uuid, time: at(6 * minute).toISOString() })
    expect(knownGpus(removal.state)).toHaveLength(7)
  })

  it("keeps a GPU that is back on its node within the grace", () => {
    const { events } = run([
      read(nodeA, at(0), gpusA),
      read(nodeA, at(minute), seven),
      read(nodeA, at(3 * minute), gpusA),
      tickAt(at(30 * minute)),
    ])

    expect(ofKind(events, "removed")).toEqual([])
  })

  it("does not remove the GPU a partial reading could not read", () => {
    const handleLost = [{ kind: "device-handle" as const, pciBusId: "0000:18:00.0", reason: "Unknown Error" }]
    const { state, events } = run([
      read(nodeA, at(0), gpusA),
      read(nodeA, at(minute), seven, { failures: handleLost }),
      tickAt(at(30 * minute)),
    ])

    expect(ofKind(events, "removed")).toEqual([])
    expect(locate(state, gpusA[0]?.uuid ?? "")?.node).toBe("gpu-node-a")
  })

  it("removes, from a partial reading, only GPUs none of its failures may be", () => {
    const handleLost = [{ kind: "device-handle" as const, pciBusId: "00000000:18:00.0", reason: "Unknown Error" }]
    const { events } = run([
      read(nodeA, at(0), gpusA),
      read(nodeA, at(minute), gpusA.slice(2), { failures: handleLost }),
      tickAt(at(30 * minute)),
    ])

    expect(ofKind(events, "removed").map((event) => event.record.uuid)).toEqual([gpusA[1]?.uuid])
  })
})

describe("Inventory: GPUs that move", () => {
  it("reports a GPU swap between two nodes as two moves, whichever node is read first", () => {
    const [a0, ...restA] = gpusA
    const [b0, ...restB] = gpusB
    if (a0 === undefined || b0 === undefined) throw new Error("fixture without GPUs")
    const start = run([read(nodeA, at(0), gpusA), read(nodeB, at(0), gpusB)])

    const orders = [
      {
        steps: [read(nodeA, at(minute), [b0, ...restA]), read(nodeB, at(2 * minute), [a0, ...restB])],
        a0At: 2 * minute,
      },
      { steps: [read(nodeB, at(minute), [a0, ...restB]), read(nodeA, at(2 * minute), [b0, ...restA])], a0At: minute },
    ]
    for (const order of orders) {
      const { state, events } = run([...order.steps, tickAt(at(30 * minute))], { from: start.state })

      expect(kinds(events)).toEqual(["moved", "moved"])
      expect(events.find((event) => event.record.uuid === a0.uuid)?.record).toMatchObject({
        node: "gpu-node-b",
        machine: "i-0bbb",
        previousNode: "gpu-node-a",
        previousMachine: "i-0aaa",
        time: at(order.a0At).toISOString(),
      })
      expect(events.find((event) => event.record.uuid === b0.uuid)?.record).toMatchObject({
        node: "gpu-node-a",
        previousNode: "gpu-node-b",
        previousMachine: "i-0bbb",
      })
      expect(locate(state, a0.uuid)?.node).toBe("gpu-node-b")
      expect(locate(state, b0.uuid)?.node).toBe("gpu-node-a")
      expect(knownGpus(state)).toHaveLength(16)
    }
  })

  it("does not remove a GPU that moved in when its old node is read later", () => {
    const [a0, ...restA] = gpusA
    if (a0 === undefined) throw new Error("fixture without GPUs")
    const { state, events } = run([
      read(nodeA, at(0), gpusA),
      read(nodeB, at(minute), [a0]),
      read(nodeA, at(2 * minute), restA),
      tickAt(at(30 * minute)),
    ])

    expect(kinds(events)).toEqual([...Array(8).fill("added"), "moved"])
    expect(locate(state, a0.uuid)).toMatchObject({ node: "gpu-node-b", machine: "i-0bbb" })
  })

  it("reports a node recreated on another machine under the same name as moved", () => {
    const replaced = { ...nodeA, uid: "uid-a2", providerId: "aws:///eu-west-1a/i-0ccc" }
    const { events } = run([read(nodeA, at(0), gpusA), read(replaced, at(minute), gpusA)])

    const moved = ofKind(events, "moved")
    expect(moved).toHaveLength(8)
    expect(moved[0]?.record).toMatchObject({
      node: "gpu-node-a",
      machine: "i-0ccc",
      previousNode: "gpu-node-a",
      previousMachine: "i-0aaa",
    })
    expect(moved[0]?.origin.nodeUid).toBe("uid-a2")
  })

  it("ignores a reading older than one already applied to its node, and old news of a GPU placed elsewhere", () => {
    const [a0, ...restA] = gpusA
    if (a0 === undefined) throw new Error("fixture without GPUs")
    const { state, events } = run([
      read(nodeA, at(0), gpusA),
      read(nodeB, at(2 * minute), [a0]),
      read(nodeA, at(minute), gpusA),
      read(nodeA, at(3 * minute), restA),
      read(nodeA, at(2 * minute + 30_000), gpusA),
    ])

    expect(kinds(events)).toEqual([...Array(8).fill("added"), "moved"])
    expect(locate(state, a0.uuid)?.node).toBe("gpu-node-b")
  })
})

describe("Inventory: rebuilt from a store", () => {
  const before = run([read(nodeA, at(0), gpusA), read(nodeB, at(0), gpusB)])
  const restarted = fromKnown(knownGpus(before.state), at(hour / 2), settings)

  it("knows the fleet again: no added storm", () => {
    const { events } = run([read(nodeA, at(hour / 2 + minute), gpusA), read(nodeB, at(hour / 2 + minute), gpusB)], {
      from: restarted,
    })

    expect(events).toEqual([])
    expect(knownGpus(restarted)).toEqual(knownGpus(before.state))
  })

  it("reports a GPU that moved while the service was down as moved", () => {
    const [a0, ...restA] = gpusA
    if (a0 === undefined) throw new Error("fixture without GPUs")
    const { events } = run(
      [read(nodeB, at(hour / 2 + minute), [...gpusB, a0]), read(nodeA, at(hour / 2 + 2 * minute), restA)],
      {
        from: restarted,
      },
    )

    expect(kinds(events)).toEqual(["moved"])
    expect(events[0]?.record).toMatchObject({ uuid: a0.uuid, node: "gpu-node-b", previousNode: "gpu-node-a" })
  })

  it("removes, a grace after the first list of the cluster, the GPUs of nodes deleted or left without a pod meanwhile", () => {
    const nodeC = { name: "gpu-node-c" }
    const lastRun = run([read(nodeA, at(0), gpusA), read(nodeB, at(0), gpusB), read(nodeC, at(0), hostGpus("c", 2))])
    // Node c was deleted and node b lost its device-plugin pod while the service was down.
    const start = hour / 2
    const loaded = fromKnown(knownGpus(lastRun.state), at(start), settings)
    const afterList = run([listed(at(start + 1_000), [nodeA, nodeB], [nodeA]), read(nodeA, at(start + 2_000), gpusA)], {
      from: loaded,
    })
    expect(afterList.events).toEqual([])
    expect(tick(afterList.state, at(start + 1_000 + 5 * minute - 1), settings).events).toEqual([])

    const removal = tick(afterList.state, at(start + 1_000 + 5 * minute), settings)
    expect(kinds(removal.events)).toEqual(Array(10).fill("removed"))
    expect(new Set(removal.events.map((event) => event.record.node))).toEqual(new Set(["gpu-node-b", "gpu-node-c"]))
    expect(inventorySnapshot(removal.state)).toMatchObject({ gpus: 8, nodes: 1 })
  })

  it("keeps a listed node's GPUs when its pod comes back within the grace after the list", () => {
    const { events } = run(
      [
        listed(at(hour / 2), [nodeA, nodeB], [nodeA]),
        read(nodeA, at(hour / 2 + 1_000), gpusA),
        read(nodeB, at(hour / 2 + minute), gpusB),
        tickAt(at(hour / 2 + 10 * minute)),
      ],
      { from: restarted },
    )
    expect(events).toEqual([])
  })

  it("removes the GPUs of nodes that nothing confirms after the restart", () => {
    const quiet = { ...settings, reportIntervalMs: 0 }
    const nodeC = { name: "gpu-node-c" }
    const lastRun = run([read(nodeA, at(0), gpusA), read(nodeB, at(0), gpusB), read(nodeC, at(0), hostGpus("c", 2))])
    const loaded = fromKnown(knownGpus(lastRun.state), at(hour), quiet)

    const confirmed = run([read(nodeA, at(hour + minute), gpusA), failed(nodeB, at(hour + minute))], {
      from: loaded,
      settings: quiet,
    })
    expect(confirmed.events).toEqual([])
    expect(tick(confirmed.state, at(hour + 5 * minute - 1), quiet).events).toEqual([])

    const removal = tick(confirmed.state, at(hour + 5 * minute), quiet)
    expect(kinds(removal.events)).toEqual(["removed", "removed"])
    expect(removal.events.every((event) => event.record.node === "gpu-node-c")).toBe(true)
    expect(inventorySnapshot(removal.state)).toMatchObject({ gpus: 16, nodes: 2 })
  })
})
