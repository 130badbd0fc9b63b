import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CoreV1Api, KubeConfig, type V1Pod, Watch } from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FleetTruth } from "../../src/ledger/FleetTruth.ts"
import type { LedgerEntry } from "../../src/ledger/LedgerEntry.ts"
import { parseLedger } from "../../src/ledger/LedgerJsonl.ts"
import { type SimulatedCluster, startSimulatedCluster } from "../../src/SimulatedCluster.ts"
import { eventually } from "../Eventually.ts"

const ofKind = <K extends LedgerEntry["entry"]>(entries: ReadonlyArray<LedgerEntry>, kind: K) =>
  entries.filter((entry): entry is Extract<LedgerEntry, { entry: K }> => entry.entry === kind)

const entriesAfter = (entries: ReadonlyArray<LedgerEntry>, seq: number) => entries.filter((entry) => entry.seq > seq)

describe("the ground-truth ledger", () => {
  let cluster: SimulatedCluster
  let directory: string
  let ledgerPath: string

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "gpu-sim-ledger-"))
    ledgerPath = join(directory, "ledger.jsonl")
    cluster = await startSimulatedCluster({
      nodes: 12,
      seed: "ledger",
      modelMix: { "h100-hgx": 4, "gb200-nvl72": 2, t4: 3, "broken-driver": 1 },
      execLatency: 0,
      podTimings: { startMs: 20, readyMs: 20, terminationMs: 20 },
      ledgerPath,
    })
  })

  afterAll(async () => {
    await cluster.close()
    await rm(directory, { recursive: true, force: true })
  })

  const gpusOf = (node: string) => (cluster.node(node)?.gpus ?? []).map((gpu) => gpu.uuid)
  const nodesOf = (model: string) => cluster.nodeNames().filter((name) => cluster.node(name)?.model === model)
  const lastSeq = () => cluster.ledger.entries().at(-1)?.seq ?? 0

  it("places every GPU of the starting fleet where nvidia-smi reports it, with each node and ready pod", () => {
    const entries = cluster.ledger.entries()
    const where = cluster.ledger.whereNow()
    for (const node of cluster.nodeNames()) {
      expect(ofKind(entries, "node-joined").find((entry) => entry.node === node)?.providerId).toBe(
        cluster.node(node)?.providerId,
      )
      const pod = cluster.podOf(node)
      expect(ofKind(entries, "pod-created").some((entry) => entry.pod === pod && entry.node === node)).toBe(true)
      expect(ofKind(entries, "pod-ready").some((entry) => entry.pod === pod)).toBe(true)
      for (const uuid of gpusOf(node)) expect(where.get(uuid)?.node).toBe(node)
    }
    expect(where.size).toBe(cluster.nodeNames().reduce((sum, node) => sum + gpusOf(node).length, 0))
    expect(new Set(ofKind(entries, "gpu-placed").map((entry) => entry.cause))).toEqual(new Set(["cluster-start"]))
    expect(entries.map((entry) => entry.seq)).toEqual(entries.map((_, index) => index + 1))
  })

  it("marks the GPUs of a node with a broken driver unreadable, and readable again once repaired", () => {
    const [broken] = nodesOf("broken-driver")
    if (broken === undefined) throw new Error("no broken-driver node")
    const failure = cluster.node(broken)?.driverFailure
    const hidden = cluster.ledger.whereNow()
    const unreadable = gpusOf(broken).filter((uuid) => hidden.get(uuid)?.readable === false)
    // A lost device handle hides one GPU; the other failures hide them all.
    expect(unreadable).toHaveLength(failure === "device-handle" ? 1 : gpusOf(broken).length)

    const [healthy] = nodesOf("t4")
    if (healthy === undefined) throw new Error("no t4 node")
    const since = lastSeq()
    cluster.setDriverFailure(healthy, "driver-not-loaded")
    expect(gpusOf(healthy).every((uuid) => cluster.ledger.whereNow().get(uuid)?.readable === false)).toBe(true)
    cluster.setDriverFailure(healthy, undefined)
    expect(gpusOf(healthy).every((uuid) => cluster.ledger.whereNow().get(uuid)?.readable === true)).toBe(true)
    expect(entriesAfter(cluster.ledger.entries(), since).map((entry) => entry.entry)).toEqual([
      "driver-failed",
      "driver-repaired",
    ])
  })

  it("records a GPU swap as a new stay of each GPU moved, and both pods' restarts with their watch resourceVersions", async () => {
    const [left, right] = nodesOf("h100-hgx")
    if (left === undefined || right === undefined) throw new Error("fleet lacks two H100 nodes")
    const kubeConfig = new KubeConfig()
    kubeConfig.loadFromFile(cluster.kubeconfigPath)
    const core = kubeConfig.makeApiClient(CoreV1Api)
    const listed = await core.listNamespacedPod({ namespace: cluster.namespace })
    const deletions = new Map<string, string>()
    const watch = await new Watch(kubeConfig).watch(
      `/api/v1/namespaces/${cluster.namespace}/pods`,
      { resourceVersion: listed.metadata?.resourceVersion ?? "" },
      (type: string, pod: V1Pod) => {
        if (type === "DELETED") deletions.set(pod.metadata?.name ?? "", pod.metadata?.resourceVersion ?? "")
      },
      () => undefined,
    )
    try {
      const oldPods = [cluster.podOf(left), cluster.podOf(right)]
      const since = lastSeq()
      const swappedAt = Date.now()
      const moved = cluster.swapGpus(left, right, { index: 2 })
      await eventually("both pods replaced and ready", () =>
        [left, right].every((node, index) => {
          const pod = cluster.podOf(node)
          return (
            pod !== undefined &&
            pod !== oldPods[index] &&
            entriesAfter(cluster.ledger.entries(), since).some(
              (entry) => entry.entry === "pod-ready" && entry.pod === pod,
            )
          )
        }),
      )
      await eventually("the watch to see both deletions", () => oldPods.every((pod) => deletions.has(pod ?? "")))
      const entries = entriesAfter(cluster.ledger.entries(), since)
      const placed = ofKind(entries, "gpu-placed")
      expect(placed.map((entry) => entry.uuid).sort()).toEqual([...moved].sort())
      expect(placed.every((entry) => entry.cause === "gpu-swap")).toBe(true)
      for (const uuid of moved) {
        const history = cluster.ledger.history(uuid)
        const [first, second] = history?.stays ?? []
        expect(history?.stays).toHaveLength(2)
        expect(first?.to).toBe(second?.from)
        expect(second?.from).toBeGreaterThanOrEqual(swappedAt)
        expect(second?.node).toBe(cluster.ledger.whereNow().get(uuid)?.node)
        expect(gpusOf(second?.node ?? "")).toContain(uuid)
        expect(second?.node).not.toBe(first?.node)
      }
      for (const pod of oldPods) {
        expect(ofKind(entries, "pod-terminating").some((entry) => entry.pod === pod)).toBe(true)
        const deleted = ofKind(entries, "pod-deleted").find((entry) => entry.pod === pod)
        expect(deleted?.reason).toBe("restarted")
        expect(String(deleted?.resourceVersion)).toBe(deletions.get(pod ?? ""))
      }
    } finally {
      watch.abort()
    }
  })

  it("records a node leaving with its GPUs gone, and a node joining with its GPUs placed", async () => {
    const [leaving] = nodesOf("t4")
    if (leaving === undefined) throw new Error("no t4 node")
    const gpus = gpusOf(leaving)
    const pod = cluster.podOf(leaving)
    const since = lastSeq()
    cluster.removeNode(leaving)
    const left = entriesAfter(cluster.ledger.entries(), since)
    expect(ofKind(left, "gpu-gone").map((entry) => entry.uuid)).toEqual(gpus)
    expect(ofKind(left, "node-left").map((entry) => entry.node)).toEqual([leaving])
    expect(ofKind(left, "pod-deleted")).toEqual([expect.objectContaining({ pod, reason: "node-left" })])
    for (const uuid of gpus) {
      expect(cluster.ledger.whereNow().has(uuid)).toBe(false)
      expect(cluster.ledger.history(uuid)?.goneAt).toBeDefined()
    }

    const joinedFrom = lastSeq()
    const joined = cluster.addNode("l40s")
    await eventually("the new pod to be ready", () =>
      entriesAfter(cluster.ledger.entries(), joinedFrom).some((entry) => entry.entry === "pod-ready"),
    )
    const entries = entriesAfter(cluster.ledger.entries(), joinedFrom)
    expect(ofKind(entries, "node-joined").map((entry) => entry.node)).toEqual([joined])
    expect(ofKind(entries, "gpu-placed").map((entry) => [entry.uuid, entry.node, entry.cause])).toEqual(
      gpusOf(joined).map((uuid) => [uuid, joined, "node-joined"]),
    )
    expect(entries.map((entry) => entry.entry)).toEqual(expect.arrayContaining(["pod-created", "pod-ready"]))
  })

  it("breaks drivers at the fault rate, hides their GPUs, and repairs them all when faults are cleared", async () => {
    const since = lastSeq()
    cluster.faults.setRates({ driverFailuresPerMinute: 600, driverFailureSeconds: 60 })
    try {
      await eventually(
        "two drivers to fail",
        () => ofKind(entriesAfter(cluster.ledger.entries(), since), "driver-failed").length >= 2,
      )
    } finally {
      cluster.faults.clear()
    }
    const entries = entriesAfter(cluster.ledger.entries(), since)
    const failed = ofKind(entries, "driver-failed").map((entry) => entry.node)
    expect(
      ofKind(entries, "driver-repaired")
        .map((entry) => entry.node)
        .sort(),
    ).toEqual([...failed].sort())
    for (const node of failed) {
      expect(cluster.node(node)?.driverFailure).toBeUndefined()
      expect(gpusOf(node).every((uuid) => cluster.ledger.whereNow().get(uuid)?.readable)).toBe(true)
    }
  })

  it("records each health change a health fault makes, with the node, and every board back to ok when faults are cleared", async () => {
    const since = lastSeq()
    cluster.faults.setRates({ healthFaultsPerGpuMinute: 1, healthStageSeconds: 1 })
    try {
      await eventually(
        "a GPU to turn degraded or failed and one to recover",
        () => {
          const changes = ofKind(entriesAfter(cluster.ledger.entries(), since), "gpu-health")
          return changes.length >= 3 && changes.some((change) => change.to === "ok")
        },
        15_000,
      )
    } finally {
      cluster.faults.clear()
    }
    const changes = ofKind(entriesAfter(cluster.ledger.entries(), since), "gpu-health")
    const where = cluster.ledger.whereNow()
    for (const change of changes) {
      expect(change.from).not.toBe(change.to)
      expect(change.node).toBe(where.get(change.uuid)?.node)
    }
    const truth = FleetTruth.of(cluster.ledger.entries())
    for (const uuid of new Set(changes.map((change) => change.uuid))) {
      const health = truth.history(uuid)?.health ?? []
      expect(health[0]?.state).toBe("ok")
      expect(health.at(-1)?.state).toBe("ok")
      expect(health.at(-1)?.to).toBeUndefined()
      for (let index = 1; index < health.length; index++)
        expect(health[index]?.state).not.toBe(health[index - 1]?.state)
      const node = where.get(uuid)?.node ?? ""
      expect(cluster.node(node)?.gpus.find((gpu) => gpu.uuid === uuid)?.health).toBe("ok")
    }
  })

  it("writes the same entries to its file, which replays to the same truth", async () => {
    // Closing the cluster finishes the file.
    await cluster.close()
    const fromFile = parseLedger(await readFile(ledgerPath, "utf8"))
    expect(fromFile).toEqual(cluster.ledger.entries())
    expect(FleetTruth.of(fromFile).whereNow()).toEqual(cluster.ledger.whereNow())
  })
})

describe("a ledger file", () => {
  it("names the line that is not a ledger entry", () => {
    const good = '{"seq":1,"time":"2026-01-01T00:00:00.000Z","resourceVersion":1001,"entry":"node-left","node":"a"}'
    expect(parseLedger(`${good}\n\n`)).toHaveLength(1)
    expect(() => parseLedger(`${good}\nnot json`)).toThrow("ledger line 2: not JSON")
    expect(() => parseLedger(good.replace("node-left", "node-exploded"))).toThrow('unknown entry "node-exploded"')
    expect(() => parseLedger(good.replace('"node":"a"', '"node":1'))).toThrow("node-left needs node as a string")
  })
})
