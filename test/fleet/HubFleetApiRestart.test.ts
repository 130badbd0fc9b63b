import { type JetStreamClient, jetstream, jetstreamManager } from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ServiceConfig } from "../../src/config/ServiceConfig.ts"
import { type GpuRecord, recordSchema } from "../../src/domain/GpuRecord.ts"
import { upsert } from "../../src/domain/InventoryChange.ts"
import { recordId } from "../../src/domain/RecordId.ts"
import * as NatsExporter from "../../src/exporter/nats/NatsExporter.ts"
import * as NatsKvInventoryStore from "../../src/exporter/nats/NatsKvInventoryStore.ts"
import { streamConfig } from "../../src/exporter/nats/NatsStream.ts"
import { eventSubject } from "../../src/exporter/nats/NatsSubject.ts"
import { recordJson } from "../../src/exporter/RecordJson.ts"
import { type NatsTopology, startNatsTopology } from "../support/NatsTopology.ts"
import { hubServiceConfig, type RunningHub, startHub } from "../support/RunningHub.ts"
import { knownGpu } from "./FleetFixtures.ts"

// A restarted hub's fleet API over real nats-servers: each cluster's inventory store writes its GPUs to
// the cluster's KV bucket, the hub's KV bucket sources them, and a hub started again answers for every
// cluster's GPUs before any cluster sends a record.

const clusters = ["east", "west"] as const
const prefix = "gpu.serials"
const bucket = "gpu_serials"

let topology: NatsTopology
const leaves = new Map<string, { connection: NatsConnection; js: JetStreamClient }>()
let hubConnection: NatsConnection

beforeAll(async () => {
  topology = await startNatsTopology(clusters)
  for (const cluster of clusters) {
    const connection = await connect({ servers: topology.leaf(cluster).url, maxReconnectAttempts: 10 })
    leaves.set(cluster, { connection, js: jetstream(connection) })
    const manager = await jetstreamManager(connection)
    await manager.streams.add(streamConfig("GPU_SERIALS", prefix, NatsExporter.factory.defaultConfig.streamSettings))
  }
  hubConnection = await connect({ servers: topology.hub.url, maxReconnectAttempts: 10 })
}, 60_000)

afterAll(async () => {
  await hubConnection?.close()
  await Promise.all([...leaves.values()].map((leaf) => leaf.connection.close()))
  await topology?.dispose()
})

const leaf = (cluster: string) => {
  const found = leaves.get(cluster)
  if (found === undefined) throw new Error(`no leaf ${cluster}`)
  return found
}

const hubConfig = (): ServiceConfig => hubServiceConfig({ url: topology.hub.url, clusters: ["east", "west"] })

const eventually = async (hub: RunningHub, what: string, condition: () => boolean | Promise<boolean>) => {
  for (let attempt = 0; !(await condition()); attempt++) {
    const ended = hub.ended()
    if (ended !== undefined) throw new Error(`${ended} before ${what}`)
    if (attempt >= 600) throw new Error(`gave up waiting until ${what}`)
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

const seen = new Date(Date.now() - 5 * 60_000)
const eastGpu = knownGpu({ uuid: "GPU-EAST-1", node: "n-1", index: 0, serial: "1650000000011", seen })
const westGpu = knownGpu({ uuid: "GPU-WEST-1", node: "n-2", index: 3, serial: "1650000000012", seen })

/** Writes the GPU to its cluster's KV bucket as that cluster's inventory store does. */
const storeInCluster = (cluster: string, gpu: typeof eastGpu) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* NatsKvInventoryStore.make({ connection: leaf(cluster).connection, bucket, cluster })
      yield* store.load
      yield* store.apply([upsert(gpu)])
    }),
  )

/** The uuid keys the hub's KV bucket holds (sourced from the clusters'). */
const hubUuidKeys = async (): Promise<Array<string>> => {
  const kv = await new Kvm(hubConnection).open(bucket)
  const keys: Array<string> = []
  for await (const key of await kv.keys("*.uuid.*")) keys.push(key)
  return keys.sort()
}

const stopped = async (hub: RunningHub | undefined) => {
  await hub?.stop()
}

describe("a restarted hub's fleet API", () => {
  let first: RunningHub | undefined
  let hub: RunningHub | undefined

  afterAll(async () => {
    await stopped(first)
    await stopped(hub)
  })

  it("answers for a GPU of each cluster from the hub's KV bucket before any record arrives", async () => {
    await storeInCluster("east", eastGpu)
    await storeInCluster("west", westGpu)
    // A value the store's encoding does not decode: skipped and counted.
    const eastKv = await new Kvm(leaf("east").connection).open(bucket)
    await eastKv.put("east.uuid.GPU-BAD", "not a location")

    // The first hub sets up the hub bucket sourcing the clusters'; it is stopped once the bucket holds them.
    const running = startHub(hubConfig())
    first = running
    await eventually(running, "the hub KV bucket holds every cluster's GPUs", async () => {
      if (running.port() === 0) return false
      const keys = await hubUuidKeys().catch(() => [])
      return keys.length === 3
    })
    await running.stop()
    first = undefined

    const restarted = startHub(hubConfig())
    hub = restarted
    await eventually(restarted, "the restarted hub serves its API", () => restarted.port() > 0)
    await eventually(
      restarted,
      "the restarted hub's API knows both GPUs",
      async () => (await api(restarted, "gpus")).body.total === 2,
    )
    for (const [serial, cluster, uuid, node] of [
      ["1650000000011", "east", "GPU-EAST-1", "n-1"],
      ["1650000000012", "west", "GPU-WEST-1", "n-2"],
    ] as const) {
      const found = await api(restarted, `gpus?q=${serial}`)
      const items = found.body.items as ReadonlyArray<GpuItem>
      expect(items.map((item) => [item.uuid, item.cluster, item.node, item.gpu])).toEqual([
        [uuid, cluster, node, serial],
      ])
    }
    const nodes = await api(restarted, "nodes")
    expect((nodes.body.items as ReadonlyArray<{ name: string }>).map((item) => item.name)).toEqual([
      "east/n-1",
      "west/n-2",
    ])
    // Known from the bucket, not from records: nothing exported, no events, no history entries.
    expect(restarted.events).toEqual([])
    expect((await api(restarted, "events")).body.items).toEqual([])
    expect((await api(restarted, "gpus/GPU-EAST-1/history")).body).toMatchObject({ entries: [] })
    const read = restarted.logs.find((line) => line.msg === "fleet page read the GPUs of the hub KV bucket")
    expect(read).toMatchObject({ gpus: 2, skipped: 1 })
  }, 120_000)

  it("moves a GPU known from the bucket when a record moves it", async () => {
    const restarted = hub
    if (restarted === undefined) throw new Error("the hub did not start")
    const time = new Date().toISOString()
    const moved: GpuRecord = {
      schema: recordSchema,
      event: "moved",
      id: recordId({ cluster: "west", uuid: "GPU-WEST-1", event: "moved", node: "n-5", machine: "i-n-5", time }),
      cluster: "west",
      node: "n-5",
      machine: "i-n-5",
      previousNode: "n-2",
      previousMachine: "i-n-2",
      source: "gpu-operator/nvidia-device-plugin-n-5",
      chassis: "",
      gpu: "1650000000012",
      time,
      uuid: "GPU-WEST-1",
      index: 3,
      product: "NVIDIA H100 80GB HBM3",
      serialShared: false,
    }
    await leaf("west").js.publish(eventSubject(prefix, moved), recordJson(moved), { msgID: moved.id })
    await eventually(restarted, "the API places the GPU on its new node", async () => {
      const items = (await api(restarted, "gpus?q=1650000000012")).body.items as ReadonlyArray<GpuItem>
      return items.length === 1 && items[0]?.node === "n-5"
    })
    expect((await api(restarted, "gpus?q=1650000000012")).body.items).toMatchObject([
      { uuid: "GPU-WEST-1", cluster: "west", node: "n-5" },
    ])
  }, 60_000)
})
