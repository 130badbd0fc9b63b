import { type JetStreamClient, jetstream, jetstreamManager } from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ServiceConfig } from "../../../src/config/ServiceConfig.ts"
import { heartbeatSchema } from "../../../src/domain/ClusterHeartbeat.ts"
import { type GpuRecord, recordSchema } from "../../../src/domain/GpuRecord.ts"
import { upsert } from "../../../src/domain/InventoryChange.ts"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import type { InventoryEventKind } from "../../../src/domain/InventoryEventKind.ts"
import { recordId } from "../../../src/domain/RecordId.ts"
import { locate } from "../../../src/exporter/nats/GpuLocationLookup.ts"
import * as NatsExporter from "../../../src/exporter/nats/NatsExporter.ts"
import { storeFactory as natsKvStore } from "../../../src/exporter/nats/NatsKvInventoryStore.ts"
import { streamConfig } from "../../../src/exporter/nats/NatsStream.ts"
import { eventSubject } from "../../../src/exporter/nats/NatsSubject.ts"
import { recordJson } from "../../../src/exporter/RecordJson.ts"
import { type NatsTopology, startNatsTopology } from "../../support/NatsTopology.ts"
import { hubServiceConfig, type RunningHub, startHub } from "../../support/RunningHub.ts"

const clusters = ["east", "west"] as const
const prefix = "gpu.serials"
const clusterStream = "GPU_SERIALS"

let topology: NatsTopology
const leaves = new Map<string, { connection: NatsConnection; js: JetStreamClient }>()

const connectLeaf = async (cluster: string) => {
  const previous = leaves.get(cluster)
  await previous?.connection.close()
  const connection = await connect({
    servers: topology.leaf(cluster).url,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 200,
  })
  leaves.set(cluster, { connection, js: jetstream(connection) })
}

beforeAll(async () => {
  topology = await startNatsTopology(clusters)
  for (const cluster of clusters) {
    await connectLeaf(cluster)
    const manager = await jetstreamManager(leaves.get(cluster)?.connection as NatsConnection)
    // As the cluster's nats exporter creates it, so that the exporter finds nothing to update: nats-server
    // 2.9 drops a source's consumer when the stream it reads is updated.
    await manager.streams.add(streamConfig(clusterStream, prefix, NatsExporter.factory.defaultConfig.streamSettings))
  }
}, 60_000)

afterAll(async () => {
  await Promise.all([...leaves.values()].map((leaf) => leaf.connection.close()))
  await topology?.dispose()
})

// Records of the last minutes, as a live cluster writes them: a held removal's window counts from its time.
let clock = Date.now() - 10 * 60_000

/** A record as a cluster's nats exporter writes it, each one later than the one before. */
const record = (event: InventoryEventKind, cluster: string, node: string, uuid: string): GpuRecord => {
  clock += 1_000
  const time = new Date(clock).toISOString()
  const machine = `${node}-vm`
  return {
    schema: recordSchema,
    event,
    id: recordId({ cluster, uuid, event, node, machine, time }),
    cluster,
    node,
    machine,
    source: "gpu-operator/nvidia-device-plugin-daemonset-abcde",
    chassis: "",
    gpu: `serial-${uuid}`,
    time,
    uuid,
    index: 0,
    serialShared: false,
  }
}

/** Publishes as the cluster's nats exporter does: on its event subject, with the record id as Nats-Msg-Id. */
const publish = async (...records: ReadonlyArray<GpuRecord>) => {
  for (const published of records) {
    const leaf = leaves.get(published.cluster)
    if (leaf === undefined) throw new Error(`no leaf ${published.cluster}`)
    await leaf.js.publish(eventSubject(prefix, published), recordJson(published), { msgID: published.id })
  }
}

const heartbeat = async (cluster: string) => {
  const leaf = leaves.get(cluster)
  const time = new Date().toISOString()
  await leaf?.js.publish(`${prefix}.${cluster}.heartbeat`, JSON.stringify({ schema: heartbeatSchema, cluster, time }), {
    msgID: `heartbeat-${cluster}-${time}`,
  })
}

const hubConfig = (): ServiceConfig =>
  hubServiceConfig({ url: topology.hub.url, clusters: ["east", "west"], staleAfter: "10s" })

/** Polls `condition` every 100 ms until it holds; fails with `what` once the hub ended or after `attempts` polls. */
/**
 * Waits for a catch-up after a link came back: nats-server retries a broken source after a pause, and on a
 * loaded machine (the whole suite on two cores) the copy has been seen to take more than 30 s.
 */
const catchUpAttempts = 900

const eventually = async (hub: RunningHub, what: string, condition: () => boolean, attempts = 300) => {
  for (let attempt = 0; !condition(); attempt++) {
    const ended = hub.ended()
    if (ended !== undefined) throw new Error(`${ended} before ${what}`)
    if (attempt >= attempts) throw new Error(`gave up waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The hub's `fleet` readiness check as /readyz answers it. */
const fleetCheck = async (hub: RunningHub) => {
  const response = await fetch(`http://127.0.0.1:${hub.port()}/readyz`)
  const body = (await response.json()) as {
    readonly checks: Record<string, string>
  }
  return { status: response.status, fleet: body.checks.fleet }
}

const idsOf = (events: ReadonlyArray<InventoryEvent>) => events.map((event) => event.record.id)

describe("a hub pipeline over leaf nats-servers with JetStream domains", () => {
  let config: ServiceConfig
  let hub: RunningHub

  afterAll(async () => {
    await hub?.stop()
  })

  it("makes one moved, with the previous cluster, of a GPU removed in one cluster and added in another", async () => {
    config = hubConfig()
    hub = startHub(config)
    const added = record("added", "east", "e-1", "GPU-SWAP-1")
    await publish(added)
    await eventually(hub, "the hub forwards the added", () => idsOf(hub.events).includes(added.id))
    const removed = record("removed", "east", "e-1", "GPU-SWAP-1")
    const arrived = record("added", "west", "w-4", "GPU-SWAP-1")
    await publish(removed)
    await publish(arrived)
    await eventually(hub, "the hub reports the move", () => hub.events.some((event) => event.record.event === "moved"))
    const ofGpu = hub.events.filter((event) => event.record.uuid === "GPU-SWAP-1").map((event) => event.record)
    expect(ofGpu.map((event) => event.event)).toEqual(["added", "moved"])
    expect(ofGpu[1]).toMatchObject({
      cluster: "west",
      node: "w-4",
      machine: "w-4-vm",
      previousCluster: "east",
      previousNode: "e-1",
      previousMachine: "e-1-vm",
    })
  }, 60_000)

  it("hears a cluster's own nats exporter and store through its leaf: its records, and where finds its GPU in the hub bucket", async () => {
    const exported = record("added", "east", "e-5", "GPU-REAL-1")
    const config = {
      ...NatsExporter.factory.defaultConfig,
      servers: [topology.leaf("east").url],
      stream: clusterStream,
      // nats-server before 2.10.14 cannot source a message that names the stream it expects.
      streamExpect: false,
      heartbeatIntervalMs: 300,
    }
    const hubConnection = await connect({ servers: topology.hub.url })
    try {
      const located = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const settings = { id: "nats", clusterName: "east", serviceVersion: "0.0.0-test" }
            const exporter = yield* NatsExporter.factory.create(config, settings)
            yield* exporter.export([{ record: exported, origin: {} }])
            yield* exporter.flush("5 seconds")
            const store = yield* natsKvStore.create(config, settings)
            const now = new Date()
            yield* store.apply([
              upsert({
                uuid: "GPU-REAL-1",
                node: "e-5",
                machine: "e-5-vm",
                pod: { namespace: "gpu-operator", name: "nvidia-device-plugin-daemonset-abcde" },
                gpu: { index: 0, uuid: "GPU-REAL-1", serial: "1650999000111" },
                serialShared: false,
                firstSeen: now,
                lastSeen: now,
                lastReported: now,
              }),
            ])
            yield* Effect.promise(() =>
              eventually(hub, "the hub forwards the exporter's record", () => idsOf(hub.events).includes(exported.id)),
            )
            const hubBucket = yield* Effect.promise(() => new Kvm(hubConnection).open("gpu_serials"))
            for (let attempt = 0; attempt < 100; attempt++) {
              const found = yield* locate(hubBucket, "gpu_serials", "1650999000111")
              if (found.length > 0) return found
              yield* Effect.sleep("100 millis")
            }
            return []
          }),
        ),
      )
      expect(located.map((location) => [location.cluster, location.node, location.uuid])).toEqual([
        ["east", "e-5", "GPU-REAL-1"],
      ])
    } finally {
      await hubConnection.close()
    }
  }, 60_000)

  it("loses and repeats nothing of a leaf cut from the hub for 20 s", async () => {
    await topology.leaf("west").cut()
    await connectLeaf("west")
    const written = Array.from({ length: 30 }, (_, index) => record("added", "west", "w-9", `GPU-CUT-${index}`))
    await publish(...written)
    // The leaf keeps its records while the hub cannot reach it; a record published twice is one.
    await publish(written[0] as GpuRecord)
    await new Promise((resolve) => setTimeout(resolve, 20_000))
    expect(hub.events.some((event) => event.record.uuid.startsWith("GPU-CUT-"))).toBe(false)
    await topology.leaf("west").link()
    await connectLeaf("west")
    const cut = () => hub.events.filter((event) => event.record.uuid.startsWith("GPU-CUT-"))
    await eventually(hub, "the hub catches up", () => cut().length >= written.length, catchUpAttempts)
    // A moment more for anything repeated to show.
    const marker = record("added", "east", "e-2", "GPU-MARKER-1")
    await publish(marker)
    await eventually(hub, "a later record arrives", () => idsOf(hub.events).includes(marker.id))
    expect(cut().map((event) => event.record.id)).toEqual(written.map((event) => event.id))
  }, 150_000)

  it("loses and repeats nothing while the hub's own nats-server is stopped for 20 s", async () => {
    await topology.hub.stop()
    const written = Array.from({ length: 20 }, (_, index) => record("added", "east", "e-7", `GPU-AWAY-${index}`))
    await publish(...written)
    await new Promise((resolve) => setTimeout(resolve, 20_000))
    await topology.hub.start()
    const away = () => hub.events.filter((event) => event.record.uuid.startsWith("GPU-AWAY-"))
    await eventually(hub, "the hub catches up", () => away().length >= written.length, catchUpAttempts)
    const marker = record("added", "west", "w-3", "GPU-MARKER-0")
    await publish(marker)
    await eventually(hub, "a later record arrives", () => idsOf(hub.events).includes(marker.id))
    expect(away().map((event) => event.record.id)).toEqual(written.map((event) => event.id))
  }, 150_000)

  it("re-announces nothing after a restart of the hub service, and keeps a removal it held", async () => {
    const held = record("removed", "east", "e-1", "GPU-HELD-1")
    const before = record("added", "east", "e-1", "GPU-HELD-1")
    await publish(before, held)
    await eventually(hub, "the hub took the removal", () => idsOf(hub.events).includes(before.id))
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    await hub.stop()

    hub = startHub(config)
    const arrived = record("added", "west", "w-2", "GPU-HELD-1")
    await publish(arrived)
    await eventually(hub, "the restarted hub reports the move", () =>
      hub.events.some((event) => event.record.uuid === "GPU-HELD-1"),
    )
    const marker = record("added", "east", "e-3", "GPU-MARKER-2")
    await publish(marker)
    await eventually(hub, "a later record arrives", () => idsOf(hub.events).includes(marker.id))
    expect(hub.events.map((event) => [event.record.uuid, event.record.event, event.record.previousCluster])).toEqual([
      ["GPU-HELD-1", "moved", "east"],
      ["GPU-MARKER-2", "added", undefined],
    ])
  }, 60_000)

  it("names a cluster stale in /readyz and the gauge once unheard of, and ready again once heard", async () => {
    let beating = true
    const beats = (async () => {
      while (beating) {
        await heartbeat("east")
        await new Promise((resolve) => setTimeout(resolve, 1_000))
      }
    })()
    try {
      await heartbeat("west")
      let ready = await fleetCheck(hub)
      for (let attempt = 0; attempt < 300 && ready.fleet !== "clusters not heard of for 10s: west"; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        ready = await fleetCheck(hub)
      }
      expect(ready.status).toBe(503)
      expect(ready.fleet).toBe("clusters not heard of for 10s: west")
      const scrape = async () => (await fetch(`http://127.0.0.1:${hub.port()}/metrics`)).text()
      let metrics = await scrape()
      for (let attempt = 0; attempt < 100 && !metrics.includes("gpu_serials_hub_cluster_stale"); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        metrics = await scrape()
      }
      expect(metrics).toMatch(/gpu_serials_hub_cluster_stale\{cluster="west"\} 1/)
      expect(metrics).toMatch(/gpu_serials_hub_cluster_stale\{cluster="east"\} 0/)

      await heartbeat("west")
      for (let attempt = 0; attempt < 300 && ready.fleet?.includes("west") === true; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        ready = await fleetCheck(hub)
      }
      expect(ready.fleet).not.toMatch(/west/)
    } finally {
      beating = false
      await beats
    }
  }, 60_000)
})
