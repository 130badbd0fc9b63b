import { type JetStreamClient, jetstream } from "@nats-io/jetstream"
import { type KV, Kvm } from "@nats-io/kv"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type GpuRecord, recordSchema } from "../../../src/domain/GpuRecord.ts"
import type { HubFleetChange } from "../../../src/domain/HubFleetChange.ts"
import { hubStateWriter, loadHubState } from "../../../src/receiver/nats/HubStateBucket.ts"
import { type NatsServer, startNatsServer } from "../../exporter/nats/NatsServer.ts"

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

const bucketOf = async (options: { readonly maxValueSize?: number } = {}): Promise<{ kv: KV; bucket: string }> => {
  const bucket = `hub_state_${++buckets}`
  const kv = await new Kvm(js).create(bucket, { history: 1, ...options })
  return { kv, bucket }
}

const uuidOf = (at: number) => `GPU-${String(at).padStart(8, "0")}-0000-4000-8000-000000000000`

const placed = (from: number, count: number, cluster = "east"): Array<HubFleetChange> =>
  Array.from({ length: count }, (_, offset) => ({
    _tag: "Place",
    uuid: uuidOf(from + offset),
    place: { cluster, node: `node-${from + offset}`, machine: `vm-${from + offset}` },
  }))

const removal = (uuid: string, source = "gpu-operator/nvidia-device-plugin-x"): GpuRecord => ({
  schema: recordSchema,
  event: "removed",
  id: `removed-${uuid}`,
  cluster: "east",
  node: "node-1",
  machine: "vm-1",
  source,
  chassis: "",
  gpu: "1650123456789",
  time: "2026-03-01T00:00:00.000Z",
  uuid,
  index: 0,
  serialShared: false,
})

const noMarks = new Map<string, number>()

describe("the hub's state bucket writer", () => {
  it("writes batch after batch whole, keys set and deleted, and a restarted hub reads them all", async () => {
    const { kv, bucket } = await bucketOf()
    const writer = hubStateWriter(connection, js, kv, bucket)
    const first: Array<HubFleetChange> = [
      ...placed(0, 300),
      { _tag: "Hold", uuid: uuidOf(1_000), removal: removal(uuidOf(1_000)) },
    ]
    await Effect.runPromise(writer.write(first, { sequence: 10, sources: new Map([["east", 7]]) }))
    const second: Array<HubFleetChange> = [
      ...placed(300, 300),
      { _tag: "Forget", uuid: uuidOf(5) },
      { _tag: "Release", uuid: uuidOf(1_000) },
      // A later change of a key wins over an earlier one in the same batch.
      ...placed(6, 1, "west"),
    ]
    await Effect.runPromise(writer.write(second, { sequence: 20, sources: new Map([["east", 15]]) }))
    await Effect.runPromise(writer.write([], { sequence: 21, sources: new Map([["east", 16]]) }))

    const state = await Effect.runPromise(loadHubState(kv, bucket))
    expect(state.snapshot.places.size).toBe(599)
    expect(state.snapshot.places.has(uuidOf(5))).toBe(false)
    expect(state.snapshot.places.get(uuidOf(6))?.cluster).toBe("west")
    expect(state.snapshot.places.get(uuidOf(599))).toEqual({ cluster: "east", node: "node-599", machine: "vm-599" })
    expect(state.snapshot.held.size).toBe(0)
    expect(state.applied).toEqual({ sequence: 21, sources: new Map([["east", 16]]) })
  })

  it("writes a batch whole after another writer used the bucket", async () => {
    const { kv, bucket } = await bucketOf()
    const writer = hubStateWriter(connection, js, kv, bucket)
    await Effect.runPromise(writer.write(placed(0, 50), { sequence: 1, sources: noMarks }))
    await kv.put("place.elsewhere", JSON.stringify({ uuid: "elsewhere", cluster: "x", node: "n", machine: "m" }))
    await Effect.runPromise(writer.write(placed(50, 200), { sequence: 2, sources: noMarks }))
    await Effect.runPromise(writer.write(placed(250, 200), { sequence: 3, sources: noMarks }))

    const state = await Effect.runPromise(loadHubState(kv, bucket))
    expect(state.snapshot.places.size).toBe(451)
    expect(state.applied.sequence).toBe(3)
  })

  it("fails a batch whose key the bucket refuses, and leaves how far was applied where it was", async () => {
    const { kv, bucket } = await bucketOf({ maxValueSize: 400 })
    const writer = hubStateWriter(connection, js, kv, bucket)
    await Effect.runPromise(writer.write(placed(0, 20), { sequence: 1, sources: noMarks }))
    const tooLarge = removal(uuidOf(500), `gpu-operator/${"x".repeat(500)}`)
    const refused = await Effect.runPromiseExit(
      writer.write([...placed(20, 20), { _tag: "Hold", uuid: uuidOf(500), removal: tooLarge }, ...placed(40, 20)], {
        sequence: 2,
        sources: noMarks,
      }),
    )
    expect(Exit.isFailure(refused)).toBe(true)

    const state = await Effect.runPromise(loadHubState(kv, bucket))
    expect(state.applied.sequence).toBe(1)
    expect(state.snapshot.held.size).toBe(0)
  })
})
