import { type JetStreamClient, jetstream, jetstreamManager } from "@nats-io/jetstream"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ServiceConfig } from "../../src/config/ServiceConfig.ts"
import { type GpuRecord, recordSchema } from "../../src/domain/GpuRecord.ts"
import type { InventoryEventKind } from "../../src/domain/InventoryEventKind.ts"
import { recordId } from "../../src/domain/RecordId.ts"
import * as NatsExporter from "../../src/exporter/nats/NatsExporter.ts"
import { streamConfig } from "../../src/exporter/nats/NatsStream.ts"
import { eventSubject } from "../../src/exporter/nats/NatsSubject.ts"
import { recordJson } from "../../src/exporter/RecordJson.ts"
import { type NatsTopology, startNatsTopology } from "../support/NatsTopology.ts"
import { hubServiceConfig, startHub } from "../support/RunningHub.ts"

// A hub's fleet API over real nats-servers: a leaf per cluster, the hub's service with receiver nats and
// processor fleet, the clusters' records published as their nats exporters publish them.

const clusters = ["east", "west"] as const
const prefix = "gpu.serials"

let topology: NatsTopology
const leaves = new Map<string, { connection: NatsConnection; js: JetStreamClient }>()

beforeAll(async () => {
  topology = await startNatsTopology(clusters)
  for (const cluster of clusters) {
    const connection = await connect({ servers: topology.leaf(cluster).url, maxReconnectAttempts: 10 })
    leaves.set(cluster, { connection, js: jetstream(connection) })
    const manager = await jetstreamManager(connection)
    await manager.streams.add(streamConfig("GPU_SERIALS", prefix, NatsExporter.factory.defaultConfig.streamSettings))
  }
}, 60_000)

afterAll(async () => {
  await Promise.all([...leaves.values()].map((leaf) => leaf.connection.close()))
  await topology?.dispose()
})

// Records of the last minutes, each later than the one before: a move across clusters falls in the window.
let clock = Date.now() - 10 * 60_000

const record = (event: InventoryEventKind, cluster: string, node: string, uuid: string, serial: string): GpuRecord => {
  clock += 1_000
  const time = new Date(clock).toISOString()
  const machine = `${cluster}-${node}-vm`
  return {
    schema: recordSchema,
    event,
    id: recordId({ cluster, uuid, event, node, machine, time }),
    cluster,
    node,
    machine,
    source: "gpu-operator/nvidia-device-plugin-daemonset-abcde",
    chassis: "",
    gpu: serial,
    time,
    uuid,
    index: 0,
    product: "NVIDIA H200",
    serialShared: false,
  }
}

const publish = async (...records: ReadonlyArray<GpuRecord>) => {
  for (const published of records) {
    const leaf = leaves.get(published.cluster)
    if (leaf === undefined) throw new Error(`no leaf ${published.cluster}`)
    await leaf.js.publish(eventSubject(prefix, published), recordJson(published), { msgID: published.id })
  }
}

const hubConfig = (): ServiceConfig => hubServiceConfig({ url: topology.hub.url, clusters: ["east", "west"] })

type RunningHub = ReturnType<typeof startHub>

const eventually = async (hub: RunningHub, what: string, condition: () => boolean | Promise<boolean>) => {
  for (let attempt = 0; !(await condition()); attempt++) {
    const ended = hub.ended()
    if (ended !== undefined) throw new Error(`${ended} before ${what}`)
    if (attempt >= 300) throw new Error(`gave up waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const api = async (hub: RunningHub, path: string) => {
  const response = await fetch(`http://127.0.0.1:${hub.port()}/api/v1/${path}`, { signal: AbortSignal.timeout(5_000) })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

interface GpuItem {
  readonly uuid: string
  readonly gpu: string
  readonly cluster: string
  readonly node: string
}

describe("a hub's fleet API", () => {
  let hub: RunningHub

  afterAll(async () => {
    await hub?.stop()
  })

  it("finds a GPU of each cluster by serial, with its cluster, and files nodes by cluster and node", async () => {
    hub = startHub(hubConfig())
    const eastGpu = record("added", "east", "n-1", "GPU-EAST-1", "1650000000001")
    const westGpu = record("added", "west", "n-1", "GPU-WEST-1", "1650000000002")
    await publish(eastGpu, westGpu)
    await eventually(
      hub,
      "the hub's API knows both GPUs",
      async () => hub.port() > 0 && (await api(hub, "gpus")).body.total === 2,
    )

    for (const [serial, cluster, uuid] of [
      ["1650000000001", "east", "GPU-EAST-1"],
      ["1650000000002", "west", "GPU-WEST-1"],
    ] as const) {
      const found = await api(hub, `gpus?q=${serial}`)
      const items = found.body.items as ReadonlyArray<GpuItem>
      expect(items.map((item) => [item.uuid, item.cluster, item.node, item.gpu])).toEqual([
        [uuid, cluster, "n-1", serial],
      ])
    }
    const west = await api(hub, "gpus?cluster=west")
    expect((west.body.items as ReadonlyArray<GpuItem>).map((item) => item.uuid)).toEqual(["GPU-WEST-1"])
    const bad = await api(hub, "gpus?cluster=no.such")
    expect(bad.status).toBe(400)
    expect(bad.body.parameter).toBe("cluster")

    // The same node name in two clusters is two nodes.
    const nodes = await api(hub, "nodes")
    expect(
      (nodes.body.items as ReadonlyArray<{ name: string; cluster: string; gpus: number }>).map((node) => [
        node.name,
        node.cluster,
        node.gpus,
      ]),
    ).toEqual([
      ["east/n-1", "east", 1],
      ["west/n-1", "west", 1],
    ])
    const eastNode = await api(hub, `nodes/${encodeURIComponent("east/n-1")}`)
    expect((eastNode.body.gpus as ReadonlyArray<GpuItem>).map((gpu) => gpu.uuid)).toEqual(["GPU-EAST-1"])
    const status = await api(hub, "status")
    expect(status.body).toMatchObject({ cluster: "fleet", acrossClusters: true, gpus: 2, nodes: 2 })
  }, 60_000)

  it("places a GPU that moved across clusters in its new cluster and shows the move in its history", async () => {
    const removed = record("removed", "east", "n-1", "GPU-EAST-1", "1650000000001")
    const arrived = record("added", "west", "n-7", "GPU-EAST-1", "1650000000001")
    await publish(removed, arrived)
    await eventually(hub, "the API places the GPU in west", async () => {
      const items = (await api(hub, "gpus?q=1650000000001")).body.items as ReadonlyArray<GpuItem>
      return items.length === 1 && items[0]?.cluster === "west"
    })
    const found = await api(hub, "gpus/GPU-EAST-1")
    expect(found.body).toMatchObject({ uuid: "GPU-EAST-1", cluster: "west", node: "n-7", gpu: "1650000000001" })

    const history = await api(hub, "gpus/GPU-EAST-1/history")
    const entries = history.body.entries as ReadonlyArray<Record<string, unknown>>
    expect(entries.map((entry) => [entry.event, entry.cluster, entry.node])).toEqual([
      ["moved", "west", "n-7"],
      ["added", "east", "n-1"],
    ])
    expect(entries[0]).toMatchObject({ previousCluster: "east", previousNode: "n-1", previousMachine: "east-n-1-vm" })

    // The east node held only that GPU: it is gone, and the west node it moved to is there.
    const nodes = await api(hub, "nodes")
    expect((nodes.body.items as ReadonlyArray<{ name: string }>).map((node) => node.name)).toEqual([
      "west/n-1",
      "west/n-7",
    ])
  }, 60_000)
})
