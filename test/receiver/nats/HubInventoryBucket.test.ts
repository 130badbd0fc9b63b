import { type JetStreamClient, jetstream } from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Duration, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { locatedGpu } from "../../../src/domain/GpuLocation.ts"
import type { GpuPlace } from "../../../src/domain/HubFleetChange.ts"
import { uuidKey } from "../../../src/exporter/nats/GpuLocationKey.ts"
import { readStoredFleet } from "../../../src/receiver/nats/HubInventoryBucket.ts"
import { type NatsServer, startNatsServer } from "../../exporter/nats/NatsServer.ts"
import { knownGpu } from "../../fleet/FleetFixtures.ts"

let server: NatsServer
let connection: NatsConnection
let js: JetStreamClient
let buckets = 0

beforeAll(async () => {
  server = await startNatsServer()
  connection = await connect({ servers: server.url, timeout: 10_000 })
  js = jetstream(connection)
}, 60_000)

afterAll(async () => {
  await connection?.close()
  await server?.dispose()
})

const seenAt = (minute: number) => new Date(Date.UTC(2026, 2, 1, 0, minute))
const noPlaces = new Map<string, GpuPlace>()

/** A bucket holding each GPU under its cluster's key, as the clusters' inventory stores write them. */
const bucketWith = async (
  gpus: ReadonlyArray<{ readonly cluster: string; readonly known: ReturnType<typeof knownGpu> }>,
): Promise<string> => {
  const bucket = `hub_inventory_${++buckets}`
  const kv = await new Kvm(js).create(bucket, { history: 5 })
  for (const { cluster, known } of gpus) {
    await kv.put(uuidKey(cluster, known.uuid), JSON.stringify(locatedGpu(known, cluster, undefined)))
  }
  return bucket
}

describe("reading every cluster's GPUs from the hub's KV bucket", () => {
  it("reads each cluster's GPUs with their cluster and node, and counts values it cannot decode", async () => {
    const bucket = await bucketWith([
      { cluster: "east", known: knownGpu({ uuid: "GPU-1", node: "n-1", index: 0, serial: "1650000000001" }) },
      { cluster: "west", known: knownGpu({ uuid: "GPU-2", node: "n-1", index: 0, serial: "1650000000002" }) },
    ])
    const kv = await new Kvm(js).open(bucket)
    await kv.put("west.uuid.GPU-3", "{}")
    await kv.put("west.serial.1650000000002.GPU-2", "not read: serial keys repeat the uuid keys")

    const read = await Effect.runPromise(readStoredFleet(js, bucket, noPlaces))
    expect(read.skipped).toBe(1)
    expect(read.gpus.map((gpu) => [gpu.cluster, gpu.known.uuid, gpu.known.node, gpu.known.gpu.serial]).sort()).toEqual([
      ["east", "GPU-1", "n-1", "1650000000001"],
      ["west", "GPU-2", "n-1", "1650000000002"],
    ])
  })

  it("keeps one entry of a GPU two clusters hold: the hub's place, else the one seen last", async () => {
    const before = knownGpu({ uuid: "GPU-M", node: "n-1", index: 0, serial: "1650000000009", seen: seenAt(1) })
    const after = knownGpu({ uuid: "GPU-M", node: "n-7", index: 0, serial: "1650000000009", seen: seenAt(5) })
    const bucket = await bucketWith([
      { cluster: "east", known: before },
      { cluster: "west", known: after },
    ])
    const latest = await Effect.runPromise(readStoredFleet(js, bucket, noPlaces))
    expect(latest.gpus.map((gpu) => [gpu.cluster, gpu.known.node])).toEqual([["west", "n-7"]])

    const placed = new Map<string, GpuPlace>([["GPU-M", { cluster: "east", node: "n-1", machine: "i-n-1" }]])
    const byPlace = await Effect.runPromise(readStoredFleet(js, bucket, placed))
    expect(byPlace.gpus.map((gpu) => [gpu.cluster, gpu.known.node])).toEqual([["east", "n-1"]])
  })

  it("fails with the bucket's name when the bucket cannot be read", async () => {
    const error = await Effect.runPromise(
      Effect.flip(readStoredFleet(js, "no_such_bucket", noPlaces, Duration.seconds(20))),
    )
    expect(error).toMatchObject({ _tag: "HubInventoryError", bucket: "no_such_bucket" })
    expect(error.message).not.toBe("")
  })
})
