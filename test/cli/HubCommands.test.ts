import { spawn } from "node:child_process"
import { createServer } from "node:net"
import { type JetStreamClient, jetstream, jetstreamManager } from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { heartbeatSchema } from "../../src/domain/ClusterHeartbeat.ts"
import { upsert } from "../../src/domain/InventoryChange.ts"
import type { KnownGpu } from "../../src/domain/KnownGpu.ts"
import * as NatsExporter from "../../src/exporter/nats/NatsExporter.ts"
import * as NatsKvInventoryStore from "../../src/exporter/nats/NatsKvInventoryStore.ts"
import { streamConfig } from "../../src/exporter/nats/NatsStream.ts"
import { eventSubject } from "../../src/exporter/nats/NatsSubject.ts"
import { recordJson } from "../../src/exporter/RecordJson.ts"
import { ensureHubBucket, ensureHubStream } from "../../src/receiver/nats/HubSources.ts"
import { addedEvent } from "../exporter/InventoryEvents.ts"
import { type NatsServer, startNatsServer } from "../exporter/nats/NatsServer.ts"
import { upToDateCompiledCli } from "../support/CompiledCli.ts"
import { type NatsTopology, startNatsTopology } from "../support/NatsTopology.ts"
import { gpuSerials, jsonLines, repositoryRoot } from "./GpuSerialsCli.ts"

const clusters = ["east", "west"] as const
const prefix = "gpu.serials"
const clusterStream = "GPU_SERIALS"
const bucket = "gpu_serials"

let topology: NatsTopology
let plain: NatsServer
const leaves = new Map<string, { connection: NatsConnection; js: JetStreamClient }>()
let hub: NatsConnection

const seen = new Date("2026-03-01T10:00:00.000Z")

const gpu = (uuid: string, node: string): KnownGpu => ({
  uuid,
  node,
  machine: `i-${node}`,
  pod: { namespace: "gpu-operator", name: `nvidia-device-plugin-${node}` },
  gpu: { index: 0, uuid, serial: `serial-${uuid}`, product: "NVIDIA H100 80GB HBM3" },
  serialShared: false,
  firstSeen: seen,
  lastSeen: seen,
  lastReported: seen,
})

/** The GPUs each cluster's KV bucket holds: two in east, one in west. */
const fleet = {
  east: [gpu("GPU-east-0", "east-node-1"), gpu("GPU-east-1", "east-node-2")],
  west: [gpu("GPU-west-0", "west-node-1")],
} as const

/** Polls `check` every 200 ms until it holds, at most `attempts` times. */
const eventually = async (check: () => Promise<boolean>, attempts = 150) => {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error("condition not reached")
}

/** A loopback port nothing listens on. */
const closedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return typeof address === "object" && address !== null ? address.port : 1
}

beforeAll(async () => {
  topology = await startNatsTopology(clusters)
  plain = await startNatsServer()
  for (const cluster of clusters) {
    const connection = await connect({ servers: topology.leaf(cluster).url })
    leaves.set(cluster, { connection, js: jetstream(connection) })
    const manager = await jetstreamManager(connection)
    await manager.streams.add(streamConfig(clusterStream, prefix, NatsExporter.factory.defaultConfig.streamSettings))
    await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* NatsKvInventoryStore.make({ connection, bucket, cluster })
        yield* store.apply(fleet[cluster].map((known) => upsert(known)))
      }),
    )
  }
  // A record of east and a heartbeat of west, as their nats exporters publish them.
  const record = { ...addedEvent(1).record, cluster: "east", node: "east-node-1", id: "east-record-1" }
  await leaves.get("east")?.js.publish(eventSubject(prefix, record), recordJson(record), { msgID: record.id })
  const time = new Date().toISOString()
  await leaves
    .get("west")
    ?.js.publish(`${prefix}.west.heartbeat`, JSON.stringify({ schema: heartbeatSchema, cluster: "west", time }), {
      msgID: `heartbeat-west-${time}`,
    })

  hub = await connect({ servers: topology.hub.url })
  const manager = await jetstreamManager(hub)
  await Effect.runPromise(
    Effect.gen(function* () {
      yield* ensureHubStream(manager, "GPU_SERIALS_HUB", clusterStream, prefix, clusters)
      yield* ensureHubBucket(manager, bucket, bucket, clusters)
    }),
  )
  const hubBucket = await new Kvm(hub).open(bucket)
  await eventually(async () => {
    const keys: Array<string> = []
    for await (const key of await hubBucket.keys("*.uuid.*")) keys.push(key)
    const info = await manager.streams.info("GPU_SERIALS_HUB")
    return keys.length === 3 && info.state.messages === 2
  })
}, 90_000)

afterAll(async () => {
  await hub?.close()
  await Promise.all([...leaves.values()].map((leaf) => leaf.connection.close()))
  await topology?.dispose()
  await plain?.dispose()
})

describe("gpu-serials where against a hub", () => {
  it("finds a GPU of every cluster, and --cluster, repeated or a comma list, keeps those clusters", () => {
    const env = { NATS_URL: topology.hub.url }
    const clusterOf = (stdout: string) => jsonLines(stdout).map((location) => [location.uuid, location.cluster])

    const east = gpuSerials(["where", "GPU-east-1", "--format", "json"], { env })
    expect(east.stderr).toBe("")
    expect(clusterOf(east.stdout)).toEqual([["GPU-east-1", "east"]])
    const west = gpuSerials(["where", "serial-GPU-west-0", "--format", "json"], { env })
    expect(clusterOf(west.stdout)).toEqual([["GPU-west-0", "west"]])

    const listed = gpuSerials(["where", "GPU-west-0", "--cluster", "east,west", "--format", "json"], { env })
    expect(listed.status).toBe(0)
    expect(clusterOf(listed.stdout)).toEqual([["GPU-west-0", "west"]])
    const repeated = gpuSerials(["where", "GPU-west-0", "--cluster", "east", "--cluster", "west"], { env })
    expect(repeated.status).toBe(0)
    expect(repeated.stdout).toContain("west-node-1")

    const elsewhere = gpuSerials(["where", "GPU-west-0", "--cluster", "east,central"], { env })
    expect(elsewhere.status).toBe(1)
    expect(elsewhere.stderr).toContain("no GPU with serial or uuid GPU-west-0 in clusters east, central of bucket")

    const empty = gpuSerials(["where", "GPU-west-0", "--cluster", "east,"], { env })
    expect(empty.status).toBe(2)
    expect(empty.stderr).toContain("gpu-serials where: --cluster needs a cluster name")
  }, 90_000)
})

describe("gpu-serials hub status", () => {
  it("lists every cluster with when it was last heard, its source's lag and its GPUs", () => {
    const env = { NATS_URL: topology.hub.url }
    const json = gpuSerials(["hub", "status", "--format", "json"], { env })
    expect(json.stderr).toBe("")
    expect(json.status).toBe(0)
    const statuses = jsonLines(json.stdout)
    expect(statuses).toMatchObject([
      { cluster: "east", sourceLag: 0, gpus: 2 },
      { cluster: "west", sourceLag: 0, gpus: 1 },
    ])
    for (const status of statuses) {
      expect(Number.isNaN(Date.parse(String(status.lastHeard)))).toBe(false)
      expect(status.sourceActiveMsAgo).toBeGreaterThanOrEqual(0)
    }

    const table = gpuSerials(["hub", "status"], { env })
    expect(table.status).toBe(0)
    const [header, ...rows] = table.stdout.trimEnd().split("\n")
    expect(header).toMatch(/^CLUSTER\s+LAST HEARD\s+LAG\s+SOURCE SEEN\s+GPUS$/)
    expect(rows.map((row) => [row.split(/\s+/)[0], row.split(/\s+/).at(-1)])).toEqual([
      ["east", "2"],
      ["west", "1"],
    ])
  }, 60_000)

  it("exits 1 in one line for a NATS that cannot be reached or is no hub, and 2 naming a bad flag", async () => {
    const port = await closedPort()
    const unreachable = gpuSerials(["hub", "status", "--nats-url", `nats://127.0.0.1:${port}`])
    expect(unreachable.status).toBe(1)
    expect(unreachable.stdout).toBe("")
    expect(unreachable.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(unreachable.stderr).toMatch(/^gpu-serials hub status: cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+/)

    const notHub = gpuSerials(["hub", "status", "--nats-url", plain.url])
    expect(notHub.status).toBe(1)
    expect(notHub.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(notHub.stderr).toContain("hub stream GPU_SERIALS_HUB not found")

    const format = gpuSerials(["hub", "status", "--format", "xml"], { env: { NATS_URL: topology.hub.url } })
    expect(format.status).toBe(2)
    expect(format.stderr).toContain("gpu-serials hub: --format must be table or json, not xml")
    const stream = gpuSerials(["hub", "status", "--hub-stream", "GPU.HUB"], { env: { NATS_URL: topology.hub.url } })
    expect(stream.status).toBe(2)
    expect(stream.stderr).toContain("gpu-serials hub: --hub-stream: hub stream name must not contain")
    const subcommand = gpuSerials(["hub", "list"])
    expect(subcommand.status).toBe(2)
    expect(subcommand.stderr).toContain("gpu-serials hub: unknown subcommand list")
  }, 90_000)
})

describe("gpu-serials tail against a hub", () => {
  it("follows the records of the hub's own nats exporter under its prefix, of the clusters given", async () => {
    const child = spawn(
      process.execPath,
      [upToDateCompiledCli(), "tail", "--nats-subject-prefix", "gpu.fleet", "--cluster", "east,west", "--count", "2"],
      { cwd: repositoryRoot, env: { PATH: process.env.PATH ?? "", NATS_URL: topology.hub.url } },
    )
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    const listening = new Promise<void>((resolve) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8")
        if (stderr.includes("listening on")) resolve()
      })
    })
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    await listening
    expect(stderr).toContain("listening on gpu.fleet.east.*.*, gpu.fleet.west.*.*")

    const of = (n: number, cluster: string) => {
      const event = addedEvent(n)
      return { ...event, record: { ...event.record, cluster, id: `${cluster}-${n}` } }
    }
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const config = {
            ...NatsExporter.factory.defaultConfig,
            servers: [topology.hub.url],
            subjectPrefix: "gpu.fleet",
          }
          const exporter = yield* NatsExporter.factory.create(config, {
            id: "nats",
            clusterName: "fleet",
            serviceVersion: "0.0.0-test",
          })
          yield* exporter.export([of(1, "east"), of(2, "central"), of(3, "west")])
          yield* exporter.flush("5 seconds")
        }),
      ),
    )
    expect(await exited).toBe(0)
    expect(jsonLines(stdout).map((record) => record.id)).toEqual(["east-1", "west-3"])
  }, 60_000)
})
