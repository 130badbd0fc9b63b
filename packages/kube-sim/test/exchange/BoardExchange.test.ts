import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Writable } from "node:stream"
import { Exec, KubeConfig, ResourceV1Api, type V1Status } from "@kubernetes/client-node"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import type { FleetModelName } from "../../src/catalog/GpuModel.ts"
import { BoardExchange } from "../../src/exchange/BoardExchange.ts"
import type { CrossClusterSwap } from "../../src/exchange/CrossClusterSwap.ts"
import { CrossClusterTruth } from "../../src/ledger/CrossClusterTruth.ts"
import type { LedgerEntry } from "../../src/ledger/LedgerEntry.ts"
import { parseLedger } from "../../src/ledger/LedgerJsonl.ts"
import { type SimulatedCluster, startSimulatedCluster } from "../../src/SimulatedCluster.ts"
import type { SimulatedClusterOptions } from "../../src/SimulatedClusterOptions.ts"
import { eventually } from "../Eventually.ts"
import { parseReport, type ReportedGpu } from "../nvidia-smi/SmiReport.ts"

const calm: SimulatedClusterOptions = {
  nodes: 6,
  modelMix: { "h100-hgx": 3, "gb200-nvl72": 2, t4: 1 },
  execLatency: 0,
  podTimings: { startMs: 20, readyMs: 20, terminationMs: 20 },
}

const ofKind = <K extends LedgerEntry["entry"]>(entries: ReadonlyArray<LedgerEntry>, kind: K) =>
  entries.filter((entry): entry is Extract<LedgerEntry, { entry: K }> => entry.entry === kind)

const uuidsOf = (cluster: SimulatedCluster): ReadonlyArray<string> =>
  cluster.nodeNames().flatMap((name) => (cluster.node(name)?.gpus ?? []).map((gpu) => gpu.uuid))

const nodesOf = (cluster: SimulatedCluster, model: FleetModelName) =>
  cluster.nodeNames().filter((name) => cluster.node(name)?.model === model)

/** Runs `nvidia-smi -q -x` in a node's device-plugin pod through the Kubernetes client's exec. */
const reportOf = async (cluster: SimulatedCluster, node: string): Promise<ReadonlyArray<ReportedGpu>> => {
  const kubeConfig = new KubeConfig()
  kubeConfig.loadFromFile(cluster.kubeconfigPath)
  const chunks: Array<Buffer> = []
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk)
      callback()
    },
  })
  let status: V1Status | undefined
  const socket = await new Exec(kubeConfig).exec(
    cluster.namespace,
    cluster.podOf(node) ?? "",
    cluster.container,
    ["nvidia-smi", "-q", "-x"],
    stdout,
    null,
    null,
    false,
    (received) => {
      status = received
    },
  )
  await new Promise<void>((resolve) => {
    if (socket.readyState === socket.CLOSED) resolve()
    else socket.on("close", () => resolve())
  })
  expect(status?.status).toBe("Success")
  return parseReport(Buffer.concat(chunks).toString("utf8")).gpus
}

/** Waits until the node's device-plugin pod is a new one, and ready. */
const podReplaced = async (cluster: SimulatedCluster, node: string, before: string | undefined) =>
  eventually(`a new ready pod on ${node}`, () => {
    const pod = cluster.podOf(node)
    return (
      pod !== undefined &&
      pod !== before &&
      cluster.ledger.entries().some((entry) => entry.entry === "pod-ready" && entry.pod === pod)
    )
  })

/** Runs cross-cluster churn on a fresh pair of clusters until the exchange made `count` swaps. */
const churnedSwaps = async (exchangeSeed: string, count: number): Promise<ReadonlyArray<CrossClusterSwap>> => {
  const exchange = new BoardExchange({ seed: exchangeSeed })
  const churn = { crossClusterSwapsPerMinute: 600 }
  const east = await startSimulatedCluster({ ...calm, clusterName: "east", seed: "east", exchange, churn })
  const west = await startSimulatedCluster({ ...calm, clusterName: "west", seed: "west", exchange, churn })
  try {
    await eventually(`${count} swaps`, () => exchange.swaps().length >= count, 20_000)
  } finally {
    await east.close()
    await west.close()
  }
  return exchange.swaps().slice(0, count)
}

describe("boards swapped between clusters", () => {
  let directory: string
  let exchange: BoardExchange
  let east: SimulatedCluster
  let west: SimulatedCluster

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "gpu-sim-exchange-"))
    exchange = new BoardExchange({ seed: "exchange" })
    east = await startSimulatedCluster({
      ...calm,
      clusterName: "east",
      seed: "east",
      exchange,
      ledgerPath: join(directory, "east.jsonl"),
    })
    west = await startSimulatedCluster({
      ...calm,
      clusterName: "west",
      seed: "west",
      exchange,
      ledgerPath: join(directory, "west.jsonl"),
    })
  })

  afterEach(() => {
    east.churn.setRates({ crossClusterSwapsPerMinute: 0 })
    west.churn.setRates({ crossClusterSwapsPerMinute: 0 })
  })

  afterAll(async () => {
    await east.close()
    await west.close()
    await rm(directory, { recursive: true, force: true })
  })

  it("moves a board out of one cluster's nvidia-smi and into the other's, with its UUID and serial", async () => {
    const [eastNode] = nodesOf(east, "h100-hgx")
    const [westNode] = nodesOf(west, "h100-hgx")
    if (eastNode === undefined || westNode === undefined) throw new Error("each cluster needs an H100 node")
    const eastBefore = await reportOf(east, eastNode)
    const westBefore = await reportOf(west, westNode)
    const eastBoard = eastBefore[1]
    const westBoard = westBefore[1]
    if (eastBoard === undefined || westBoard === undefined) throw new Error("H100 nodes need two GPUs")
    const pods = [east.podOf(eastNode), west.podOf(westNode)]

    const swap = exchange.swap({ cluster: "east", node: eastNode }, { cluster: "west", node: westNode }, { index: 1 })
    expect(swap.boards).toEqual([
      {
        uuid: eastBoard.fields.uuid,
        serial: eastBoard.fields.serial,
        from: { cluster: "east", node: eastNode, providerId: east.node(eastNode)?.providerId },
        to: { cluster: "west", node: westNode, providerId: west.node(westNode)?.providerId },
      },
      {
        uuid: westBoard.fields.uuid,
        serial: westBoard.fields.serial,
        from: { cluster: "west", node: westNode, providerId: west.node(westNode)?.providerId },
        to: { cluster: "east", node: eastNode, providerId: east.node(eastNode)?.providerId },
      },
    ])
    await podReplaced(east, eastNode, pods[0])
    await podReplaced(west, westNode, pods[1])
    const eastAfter = await reportOf(east, eastNode)
    const westAfter = await reportOf(west, westNode)

    const identity = (gpu: ReportedGpu | undefined) => ({
      uuid: gpu?.fields.uuid,
      serial: gpu?.fields.serial,
    })
    expect(identity(westAfter[1])).toEqual(identity(eastBoard))
    expect(identity(eastAfter[1])).toEqual(identity(westBoard))
    expect(eastAfter.map((gpu) => gpu.fields.uuid)).not.toContain(eastBoard.fields.uuid)
    expect(westAfter.map((gpu) => gpu.fields.uuid)).not.toContain(westBoard.fields.uuid)
    // The slot stays with the host: the arriving board reads at the bus id the leaving one had.
    expect(eastAfter.map((gpu) => gpu.id)).toEqual(eastBefore.map((gpu) => gpu.id))
    expect(westAfter.map((gpu) => gpu.id)).toEqual(westBefore.map((gpu) => gpu.id))

    const time = swap.time
    expect(ofKind(east.ledger.entries(), "gpu-departed")).toEqual([
      expect.objectContaining({
        uuid: eastBoard.fields.uuid,
        serial: eastBoard.fields.serial,
        node: eastNode,
        swap: swap.swap,
        toCluster: "west",
        toNode: westNode,
        time,
      }),
    ])
    expect(ofKind(east.ledger.entries(), "gpu-arrived")).toEqual([
      expect.objectContaining({
        uuid: westBoard.fields.uuid,
        node: eastNode,
        swap: swap.swap,
        fromCluster: "west",
        fromNode: westNode,
        health: "ok",
        time,
      }),
    ])
    expect(ofKind(west.ledger.entries(), "gpu-departed").map((entry) => [entry.uuid, entry.toCluster])).toEqual([
      [westBoard.fields.uuid, "east"],
    ])
    expect(ofKind(west.ledger.entries(), "gpu-arrived").map((entry) => [entry.uuid, entry.fromNode])).toEqual([
      [eastBoard.fields.uuid, eastNode],
    ])
    expect(east.ledger.whereNow().has(eastBoard.fields.uuid ?? "")).toBe(false)
    expect(east.ledger.history(eastBoard.fields.uuid ?? "")?.goneAt).toBe(Date.parse(time))
    expect(west.ledger.whereNow().get(eastBoard.fields.uuid ?? "")).toMatchObject({ node: westNode })

    const truth = CrossClusterTruth.of([
      { cluster: "east", entries: east.ledger.entries() },
      { cluster: "west", entries: west.ledger.entries() },
    ])
    expect(truth.unmatched()).toEqual([])
    expect(truth.moves().map((move) => [move.uuid, move.from.cluster, move.to.cluster, move.to.node])).toEqual(
      expect.arrayContaining([
        [eastBoard.fields.uuid, "east", "west", westNode],
        [westBoard.fields.uuid, "west", "east", eastNode],
      ]),
    )
    expect(truth.history(eastBoard.fields.uuid ?? "")?.stays.map((stay) => [stay.cluster, stay.node])).toEqual([
      ["east", eastNode],
      ["west", westNode],
    ])
  })

  it("swaps boards at the churn rate without a UUID ever in both clusters, and both ledgers tell every move", async () => {
    const everyBoard = new Set([...uuidsOf(east), ...uuidsOf(west)])
    const since = exchange.swaps().length
    let overlaps = 0
    east.churn.setRates({ crossClusterSwapsPerMinute: 300 })
    west.churn.setRates({ crossClusterSwapsPerMinute: 300 })
    await eventually(
      "ten swaps between the clusters",
      () => {
        const inEast = new Set(uuidsOf(east))
        if (uuidsOf(west).some((uuid) => inEast.has(uuid))) overlaps++
        return exchange.swaps().length >= since + 10
      },
      20_000,
    )
    east.churn.setRates({ crossClusterSwapsPerMinute: 0 })
    west.churn.setRates({ crossClusterSwapsPerMinute: 0 })
    expect(overlaps).toBe(0)
    expect(new Set([...uuidsOf(east), ...uuidsOf(west)])).toEqual(everyBoard)
    const swaps = exchange.swaps()
    expect(new Set(swaps.slice(since).flatMap((swap) => swap.boards.map((board) => board.from.cluster)))).toEqual(
      new Set(["east", "west"]),
    )
    // GB200 trays trade two-GPU modules, whose GPUs share a serial.
    for (const swap of swaps) if (swap.boards.length === 4) expect(swap.boards[0]?.serial).toBe(swap.boards[2]?.serial)

    const truth = CrossClusterTruth.of([
      { cluster: "east", entries: east.ledger.entries() },
      { cluster: "west", entries: west.ledger.entries() },
    ])
    expect(truth.unmatched()).toEqual([])
    expect(truth.moves()).toHaveLength(swaps.reduce((sum, swap) => sum + swap.boards.length, 0))
    for (const swap of swaps)
      for (const board of swap.boards)
        expect(truth.moves()).toContainEqual({
          uuid: board.uuid,
          serial: board.serial,
          swap: swap.swap,
          time: Date.parse(swap.time),
          from: board.from,
          to: board.to,
        })
    for (const uuid of everyBoard) {
      const stays = truth.history(uuid)?.stays ?? []
      for (let index = 1; index < stays.length; index++) {
        const before = stays[index - 1]
        const after = stays[index]
        expect(before?.to).toBeDefined()
        expect(after?.from).toBeGreaterThanOrEqual(before?.to ?? Number.POSITIVE_INFINITY)
      }
    }
    const where = truth.whereNow()
    expect(where.size).toBe(everyBoard.size)
    for (const [cluster, simulated] of [
      ["east", east],
      ["west", west],
    ] as const)
      for (const node of simulated.nodeNames())
        for (const gpu of simulated.node(node)?.gpus ?? []) expect(where.get(gpu.uuid)).toMatchObject({ cluster, node })
  })

  it("writes both ends to each cluster's ledger file, which replay to the same moves", async () => {
    await east.close()
    await west.close()
    const fromFiles = CrossClusterTruth.of([
      { cluster: "east", entries: parseLedger(await readFile(join(directory, "east.jsonl"), "utf8")) },
      { cluster: "west", entries: parseLedger(await readFile(join(directory, "west.jsonl"), "utf8")) },
    ])
    const live = CrossClusterTruth.of([
      { cluster: "east", entries: east.ledger.entries() },
      { cluster: "west", entries: west.ledger.entries() },
    ])
    expect(fromFiles.moves().length).toBeGreaterThan(0)
    expect(fromFiles.moves()).toEqual(live.moves())
    expect(fromFiles.whereNow()).toEqual(live.whereNow())
    expect(exchange.clusters()).toEqual([])
  })
})

describe("a board exchange", () => {
  it("makes the same swaps from the same seeds, and others from another exchange seed", async () => {
    const withoutTime = (swaps: ReadonlyArray<CrossClusterSwap>) => swaps.map(({ swap, boards }) => ({ swap, boards }))
    const first = await churnedSwaps("same", 6)
    const second = await churnedSwaps("same", 6)
    const other = await churnedSwaps("other", 6)
    expect(withoutTime(second)).toEqual(withoutTime(first))
    expect(withoutTime(other)).not.toEqual(withoutTime(first))
  })

  it("refuses a second cluster with a name or boards already in it, and cross-cluster churn without an exchange", async () => {
    const exchange = new BoardExchange()
    const east = await startSimulatedCluster({ ...calm, clusterName: "east", seed: "east", exchange })
    try {
      await expect(startSimulatedCluster({ ...calm, clusterName: "east", seed: "other", exchange })).rejects.toThrow(
        'already has a cluster named "east"',
      )
      await expect(startSimulatedCluster({ ...calm, clusterName: "west", seed: "east", exchange })).rejects.toThrow(
        'that cluster "east" has: give each cluster its own seed',
      )
      await expect(startSimulatedCluster({ ...calm, churn: { crossClusterSwapsPerMinute: 1 } })).rejects.toThrow(
        "churn.crossClusterSwapsPerMinute needs an exchange",
      )
      expect(exchange.clusters()).toEqual(["east"])
    } finally {
      await east.close()
    }
  })
})

describe("DRA clusters sharing boards", () => {
  it("publish each node's slice with the board it received and without the one it gave", async () => {
    const exchange = new BoardExchange()
    const dra: SimulatedClusterOptions = { ...calm, dra: true, nodes: 2, modelMix: { "h100-hgx": 1, t4: 1 } }
    const east = await startSimulatedCluster({ ...dra, clusterName: "east", seed: "east", exchange })
    const west = await startSimulatedCluster({ ...dra, clusterName: "west", seed: "west", exchange })
    try {
      const [eastNode] = nodesOf(east, "h100-hgx")
      const [westNode] = nodesOf(west, "h100-hgx")
      if (eastNode === undefined || westNode === undefined) throw new Error("each cluster needs an H100 node")
      const swap = exchange.swap({ cluster: "east", node: eastNode }, { cluster: "west", node: westNode })
      for (const [cluster, node] of [
        [east, eastNode],
        [west, westNode],
      ] as const) {
        const arrived = swap.boards.find((board) => board.to.node === node)?.uuid ?? ""
        const departed = swap.boards.find((board) => board.from.node === node)?.uuid ?? ""
        await eventually(`${node}'s slice with the board it received`, () =>
          cluster.ledger
            .entries()
            .some((entry) => entry.entry === "slice-published" && entry.node === node && entry.gpus.includes(arrived)),
        )
        const config = new KubeConfig()
        config.loadFromFile(cluster.kubeconfigPath)
        const slices = await config.makeApiClient(ResourceV1Api).listResourceSlice({
          fieldSelector: `spec.driver=gpu.nvidia.com,spec.nodeName=${node}`,
        })
        const listed = (slices.items[0]?.spec.devices ?? []).map((device) => device.attributes?.uuid?.string)
        expect(listed).toContain(arrived)
        expect(listed).not.toContain(departed)
      }
    } finally {
      await east.close()
      await west.close()
    }
  })
})
