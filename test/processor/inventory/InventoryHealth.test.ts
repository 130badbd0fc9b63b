import { describe, expect, it } from "vitest"
import type { Gpu } from "../../../src/domain/Gpu.ts"
import type { GpuHealthSignals } from "../../../src/domain/GpuHealth.ts"
import type { KnownGpu } from "../../../src/domain/KnownGpu.ts"
import { fromKnown, type Inventory, locate, transition } from "../../../src/processor/inventory/Inventory.ts"
import { SharedVerdicts } from "../../../src/processor/inventory/SharedVerdicts.ts"
import { at, h100, hour, kinds, minute, nodeA, nodeB, ofKind, read, run, settings, tickAt } from "./Observations.ts"

/** What a healthy H100 reports. */
const healthy: GpuHealthSignals = {
  remappedRows: { correctable: 0, uncorrectable: 0, pending: false, failure: false },
  ecc: { enabled: true, volatileUncorrectable: 0, aggregateUncorrectable: 0, volatileCorrectable: 0 },
  recoveryAction: "none",
  pcie: { linkGen: { current: 5, max: 5 }, linkWidth: { current: 16, max: 16 }, replays: 0 },
  vbios: "96.00.99.00.01",
}

const withHealth = (gpu: Gpu, signals: GpuHealthSignals): Gpu => ({ ...gpu, health: signals })

/** The node's 8 H100s, all healthy but `index`, which reports `signals`. */
const hostWith = (host: string, index?: number, signals?: GpuHealthSignals): ReadonlyArray<Gpu> =>
  Array.from({ length: 8 }, (_, at) => withHealth(h100(host, at), at === index && signals ? signals : healthy))

const remapPending: GpuHealthSignals = {
  ...healthy,
  remappedRows: { correctable: 0, uncorrectable: 1, pending: true, failure: false },
}
const remapFailed: GpuHealthSignals = {
  ...healthy,
  remappedRows: { correctable: 0, uncorrectable: 2, pending: false, failure: true },
}

describe("Inventory: health", () => {
  it("gives each added GPU its verdict and no health event on first sight, even when it is already failed", () => {
    const { events } = run([read(nodeA, at(0), hostWith("a", 3, remapFailed))])
    expect(kinds(events)).toEqual(Array(8).fill("added"))
    expect(events[0]?.record.health).toMatchObject({
      state: "ok",
      reasons: [],
      rmaEligible: false,
      vbios: healthy.vbios,
    })
    expect(events[3]?.record.health).toMatchObject({
      state: "failed",
      reasons: ["row-remap-failure"],
      rmaEligible: true,
      remappedRows: { uncorrectable: 2, failure: true },
    })
    expect(events[3]?.record.previousHealthState).toBeUndefined()
  })

  it("reports a health event with the new health and the previous state when a GPU turns degraded, then failed, then back", () => {
    const gpu = h100("a", 3).uuid
    const { events } = run([
      read(nodeA, at(0), hostWith("a")),
      read(nodeA, at(minute), hostWith("a", 3, remapPending)),
      read(nodeA, at(2 * minute), hostWith("a", 3, remapFailed)),
      read(nodeA, at(3 * minute), hostWith("a", 3, healthy)),
    ])
    const health = ofKind(events, "health")
    expect(health.map((event) => event.record.uuid)).toEqual([gpu, gpu, gpu])
    expect(
      health.map(({ record }) => [record.previousHealthState, record.health?.state, record.health?.reasons]),
    ).toEqual([
      ["ok", "degraded", ["row-remap-pending"]],
      ["degraded", "failed", ["row-remap-failure"]],
      ["failed", "ok", []],
    ])
    expect(health[0]?.record).toMatchObject({ node: nodeA.name, machine: "i-0aaa", time: at(minute).toISOString() })
    expect(ofKind(events, "observed")).toEqual([])
  })

  it("never reports a counter that changes alone, but carries the latest counters in the next record", () => {
    const counting = (correctable: number): GpuHealthSignals => ({
      ...healthy,
      ecc: { ...healthy.ecc, volatileCorrectable: correctable },
      pcie: { ...healthy.pcie, replays: correctable * 2 },
    })
    const { state, events } = run([
      read(nodeA, at(0), hostWith("a")),
      read(nodeA, at(minute), hostWith("a", 5, counting(10))),
      read(nodeA, at(2 * minute), hostWith("a", 5, counting(40))),
      tickAt(at(hour)),
    ])
    expect(ofKind(events, "health")).toEqual([])
    const report = ofKind(events, "observed").find((event) => event.record.uuid === h100("a", 5).uuid)
    expect(report?.record.health).toMatchObject({
      state: "ok",
      ecc: { volatileCorrectable: 40 },
      pcie: { replays: 80 },
    })
    expect(locate(state, h100("a", 5).uuid)?.health?.ecc?.volatileCorrectable).toBe(40)
  })

  it("reports a change of reasons within the same state", () => {
    const pendingAndNarrow: GpuHealthSignals = {
      ...remapPending,
      pcie: { linkGen: { current: 5, max: 5 }, linkWidth: { current: 8, max: 16 } },
    }
    const { events } = run([
      read(nodeA, at(0), hostWith("a", 2, remapPending)),
      read(nodeA, at(minute), hostWith("a", 2, pendingAndNarrow)),
    ])
    expect(ofKind(events, "health").map(({ record }) => [record.previousHealthState, record.health?.reasons])).toEqual([
      ["degraded", ["row-remap-pending", "pcie-width-reduced"]],
    ])
  })

  it("persists a health change to the store and counts it as the GPU's report", () => {
    const first = transition(hostState(), read(nodeA, at(minute), hostWith("a", 1, remapPending)), settings)
    expect(first.changes).toHaveLength(1)
    expect(first.changes[0]?._tag === "Upsert" ? first.changes[0].gpu.health?.state : undefined).toBe("degraded")
    // Re-affirmed by the health event: the next report is an interval after it, not after the first reading.
    const { events } = run([tickAt(at(hour))], { from: first.state })
    expect(ofKind(events, "observed").map((event) => event.record.uuid)).not.toContain(h100("a", 1).uuid)
    expect(ofKind(events, "observed")).toHaveLength(7)
  })

  it("keeps a moving GPU's health: the moved event carries it and a change on the way is a health event on the new node", () => {
    const moving = withHealth(h100("a", 0), remapPending)
    const { events } = run([read(nodeA, at(0), [withHealth(h100("a", 0), healthy)]), read(nodeB, at(minute), [moving])])
    expect(kinds(events)).toEqual(["added", "moved", "health"])
    expect(events[1]?.record).toMatchObject({ event: "moved", node: nodeB.name, health: { state: "degraded" } })
    expect(events[2]?.record).toMatchObject({
      event: "health",
      node: nodeB.name,
      previousHealthState: "ok",
    })
    expect(events[2]?.record.previousNode).toBeUndefined()
  })

  it("reports no health event when the previous health is unknown: a reading without it, or a store that keeps none", () => {
    const bare = h100("a", 0)
    const silent = run([read(nodeA, at(0), [bare]), read(nodeA, at(minute), [withHealth(bare, remapFailed)])])
    expect(kinds(silent.events)).toEqual(["added"])
    expect(locate(silent.state, bare.uuid)?.health?.state).toBe("failed")

    const stored: KnownGpu = {
      uuid: bare.uuid,
      node: nodeA.name,
      machine: "i-0aaa",
      providerId: nodeA.providerId ?? "",
      pod: { namespace: "gpu-operator", name: "nvidia-device-plugin-daemonset-gpu-node-a-x1" },
      gpu: bare,
      driverVersion: "570.148.08",
      cudaVersion: "12.8",
      serialShared: false,
      firstSeen: at(0),
      lastSeen: at(0),
      lastReported: at(0),
    }
    const restarted = fromKnown([stored], at(minute), settings)
    const step = transition(restarted, read(nodeA, at(2 * minute), [withHealth(bare, remapFailed)]), settings)
    expect(kinds(step.events)).toEqual([])
  })

  it("re-announces nothing after a restart from a store that kept a degraded GPU's health", () => {
    const before = run([read(nodeA, at(0), hostWith("a", 4, remapPending))])
    const kept = [...before.state.nodes.values()].flatMap((entry) => [...entry.gpus.values()])
    const restarted = fromKnown(kept, at(minute), settings)
    const step = transition(restarted, read(nodeA, at(2 * minute), hostWith("a", 4, remapPending)), settings)
    expect(step.events).toEqual([])
  })

  it("calls out the GPU whose VBIOS differs from its node-mates of the same product", () => {
    const odd: GpuHealthSignals = { ...healthy, vbios: "96.00.99.00.07" }
    const { events } = run([read(nodeA, at(0), hostWith("a")), read(nodeA, at(minute), hostWith("a", 6, odd))])
    expect(ofKind(events, "health").map(({ record }) => [record.uuid, record.health?.reasons])).toEqual([
      [h100("a", 6).uuid, ["vbios-mismatch"]],
    ])
  })

  it("applies the thresholds of its settings", () => {
    const strict = {
      ...settings,
      health: { retiredPagesLimit: 63, remappedRowsLimit: 2, volatileUncorrectableLimit: 0 },
    }
    const { events } = run([read(nodeA, at(0), hostWith("a", 0, remapFailed))], { settings: strict })
    expect(events[0]?.record.health?.reasons).toEqual(["row-remap-failure", "remapped-rows-limit"])
  })

  it("holds one verdict object for the GPUs of a node in the same condition, and keeps it across unchanged readings", () => {
    const first = run([read(nodeA, at(0), hostWith("a"))]).state
    const again = transition(first, read(nodeA, at(minute), hostWith("a")), settings).state
    const verdicts = (state: typeof first) =>
      Array.from({ length: 8 }, (_, index) => locate(state, h100("a", index).uuid)?.health)
    expect(new Set(verdicts(first)).size).toBe(1)
    expect(verdicts(again)).toEqual(verdicts(first))
    expect(verdicts(again)[0]).toBe(verdicts(first)[0])
    expect(Object.isFrozen(verdicts(again)[0])).toBe(true)
  })
})

const hostState = () => run([read(nodeA, at(0), hostWith("a"))]).state

describe("Inventory: verdicts kept once across readings", () => {
  const sharing = { ...settings, verdicts: new SharedVerdicts(512) }
  const verdictOf = (state: Inventory, host: string, index: number) => locate(state, h100(host, index).uuid)?.health

  it("gives a GPU that turns healthy again the verdict its healthy neighbours and other nodes hold", () => {
    const { state } = run(
      [
        read(nodeA, at(0), hostWith("a")),
        read(nodeB, at(10_000), hostWith("b")),
        read(nodeA, at(minute), hostWith("a", 3, remapPending)),
        read(nodeA, at(2 * minute), hostWith("a", 3, healthy)),
      ],
      { settings: sharing },
    )
    expect(verdictOf(state, "a", 3)?.state).toBe("ok")
    expect(verdictOf(state, "a", 3)).toBe(verdictOf(state, "a", 0))
    expect(verdictOf(state, "b", 0)).toBe(verdictOf(state, "a", 0))
  })

  it("shares the details a changed verdict has in common with the others", () => {
    const eccOnly: GpuHealthSignals = { ...healthy, ecc: { ...healthy.ecc, volatileCorrectable: 7 } }
    const { state } = run([read(nodeA, at(0), hostWith("a")), read(nodeA, at(minute), hostWith("a", 5, eccOnly))], {
      settings: sharing,
    })
    const changed = verdictOf(state, "a", 5)
    const neighbour = verdictOf(state, "a", 0)
    expect(changed?.ecc?.volatileCorrectable).toBe(7)
    expect(changed).not.toBe(neighbour)
    expect(changed?.pcie).toBe(neighbour?.pcie)
    expect(changed?.remappedRows).toBe(neighbour?.remappedRows)
    expect(changed?.reasons).toBe(neighbour?.reasons)
  })

  it("holds as many verdict objects as distinct verdicts, however many readings changed them one GPU at a time", () => {
    const steps = [read(nodeA, at(0), hostWith("a")), read(nodeB, at(1_000), hostWith("b"))]
    // Every GPU of both nodes turns degraded and back, one reading each, in turn.
    for (let index = 0; index < 8; index++) {
      steps.push(read(nodeA, at((4 * index + 1) * minute), hostWith("a", index, remapPending)))
      steps.push(read(nodeA, at((4 * index + 2) * minute), hostWith("a", index, healthy)))
      steps.push(read(nodeB, at((4 * index + 3) * minute), hostWith("b", index, remapPending)))
      steps.push(read(nodeB, at((4 * index + 4) * minute), hostWith("b", index, healthy)))
    }
    const { state } = run(steps, { settings: sharing })
    const held = ["a", "b"].flatMap((host) => Array.from({ length: 8 }, (_, index) => verdictOf(state, host, index)))
    expect(new Set(held).size).toBe(1)
    expect(new Set(held.map((verdict) => verdict?.ecc)).size).toBe(1)
  })
})
