import { assert, describe, it } from "@effect/vitest"
import { Kvm } from "@nats-io/kv"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Effect, Result } from "effect"
import { afterAll, beforeAll } from "vitest"
import { locatedGpu, parseGpuLocation, parseLocatedGpu } from "../../../src/domain/GpuLocation.ts"
import { upsert } from "../../../src/domain/InventoryChange.ts"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import type { KnownGpu } from "../../../src/domain/KnownGpu.ts"
import * as NatsKvInventoryStore from "../../../src/exporter/nats/NatsKvInventoryStore.ts"
import type { InventoryRules } from "../../../src/processor/inventory/Inventory.ts"
import { InventoryProcessor } from "../../../src/processor/inventory/InventoryProcessor.ts"
import { hostGpus, kinds, nodeA, nodeB, podOf, read } from "../../processor/inventory/Observations.ts"
import { recordingMetrics } from "../../support/RecordingMetrics.ts"
import { type NatsServer, startNatsServer } from "./NatsServer.ts"

let server: NatsServer
let connection: NatsConnection

beforeAll(async () => {
  server = await startNatsServer()
  connection = await connect({ servers: server.url })
})

afterAll(async () => {
  await connection?.drain()
  await server?.dispose()
})

const settings: InventoryRules = { cluster: "prod-eu", reportIntervalMs: 3_600_000, removalGraceMs: 3_600_000 }

const storeOf = (bucket: string, cluster = "prod-eu") => NatsKvInventoryStore.make({ connection, bucket, cluster })

const knownAt = (gpu: ReturnType<typeof hostGpus>[number], node: typeof nodeA, time: Date): KnownGpu => ({
  uuid: gpu.uuid,
  node: node.name,
  ...(node.uid === undefined ? {} : { nodeUid: node.uid }),
  ...(node.providerId === undefined ? {} : { providerId: node.providerId }),
  machine: node.name,
  pod: podOf(node),
  gpu,
  driverVersion: "570.148.08",
  cudaVersion: "12.8",
  serialShared: false,
  firstSeen: time,
  lastSeen: time,
  lastReported: time,
})

/** A processor over the bucket, as one replica or one run of the service has it; events collected. */
const replica = (bucket: string, cluster = "prod-eu") =>
  Effect.gen(function* () {
    const events: Array<InventoryEvent> = []
    const store = yield* storeOf(bucket, cluster)
    const processor = yield* InventoryProcessor.make({
      settings: { ...settings, cluster },
      store,
      sink: (batch) => Effect.sync(() => void events.push(...batch)),
    }).pipe(Effect.provide(recordingMetrics().layer))
    return { processor, events }
  })

const storedValue = (bucket: string, key: string) =>
  Effect.promise(async () => {
    const kv = await new Kvm(connection).open(bucket)
    return (await kv.get(key))?.string()
  })

describe("NATS KV inventory store", () => {
  it.live("keeps a GPU's last health in its location value, under its uuid and its serial, and gives it back", () =>
    Effect.gen(function* () {
      const [gpu] = hostGpus("h", 1)
      if (gpu === undefined) return
      const time = new Date("2026-01-01T00:00:00Z")
      const health = {
        state: "failed",
        reasons: ["row-remap-failure"],
        rmaEligible: true,
        remappedRows: { correctable: 0, uncorrectable: 3, pending: false, failure: true },
        pcie: { linkWidth: { current: 16, max: 16 } },
      } as const
      const store = yield* storeOf("health")
      yield* store.apply([upsert({ ...knownAt(gpu, nodeA, time), health })])
      const byUuid = JSON.parse((yield* storedValue("health", `prod-eu.uuid.${gpu.uuid}`)) ?? "{}")
      const bySerial = JSON.parse((yield* storedValue("health", `prod-eu.serial.${gpu.serial}.${gpu.uuid}`)) ?? "{}")
      assert.deepStrictEqual(byUuid.health, health)
      assert.deepStrictEqual(bySerial.health, health)
      const [loaded] = yield* (yield* storeOf("health")).load
      assert.deepStrictEqual(loaded?.health, health)
    }),
  )

  it.live("lets one of two concurrent writers win and the other write again against the new revision", () =>
    Effect.gen(function* () {
      const [gpu] = hostGpus("a", 1)
      if (gpu === undefined) return
      const time = new Date("2026-01-01T00:00:00Z")
      const first = yield* storeOf("cas")
      const second = yield* storeOf("cas")
      yield* first.apply([upsert(knownAt(gpu, nodeA, time))])
      yield* first.load
      yield* second.load

      const outcomes = yield* Effect.all(
        [
          Effect.result(first.apply([upsert(knownAt(gpu, nodeA, time))])),
          Effect.result(second.apply([upsert(knownAt(gpu, nodeB, time))])),
        ],
        { concurrency: 2 },
      )
      const failures = outcomes.filter(Result.isFailure)
      assert.strictEqual(failures.length, 1)
      assert.isTrue(failures[0]?.failure.conflict)
      const loser = Result.isFailure(outcomes[0]) ? first : second
      const loserNode = loser === first ? nodeA : nodeB
      yield* loser.apply([upsert(knownAt(gpu, loserNode, time))])
      const stored = parseLocatedGpu((yield* storedValue("cas", `prod-eu.uuid.${gpu.uuid}`)) ?? "")
      assert.strictEqual(stored?.node, loserNode.name)
      const bySerial = parseGpuLocation((yield* storedValue("cas", `prod-eu.serial.${gpu.serial}.${gpu.uuid}`)) ?? "")
      assert.strictEqual(bySerial?.node, loserNode.name)
    }),
  )

  it.live("rebuilds the inventory after a restart: no added storm, and a move seen by another replica is moved", () =>
    Effect.gen(function* () {
      const gpus = hostGpus("a", 8)
      const before = yield* Effect.scoped(
        Effect.gen(function* () {
          const run = yield* replica("restart")
          yield* run.processor.observe(read(nodeA, new Date(), gpus))
          yield* run.processor.flush
          return run.events
        }),
      )
      assert.deepStrictEqual(kinds(before), Array(8).fill("added"))

      const after = yield* Effect.scoped(
        Effect.gen(function* () {
          const run = yield* replica("restart")
          yield* run.processor.observe(read(nodeA, new Date(), gpus))
          yield* run.processor.observe(read(nodeB, new Date(), gpus.slice(0, 1)))
          yield* run.processor.flush
          return run.events
        }),
      )
      assert.deepStrictEqual(kinds(after), ["moved"])
      assert.strictEqual(after[0]?.record.previousNode, nodeA.name)
      assert.strictEqual(after[0]?.record.node, nodeB.name)

      const stored = parseLocatedGpu((yield* storedValue("restart", `prod-eu.uuid.${gpus[0]?.uuid}`)) ?? "")
      assert.strictEqual(stored?.node, nodeB.name)
    }),
  )

  it.live(
    "keeps two clusters sharing one bucket apart: neither overwrites the other, and a restart announces nothing",
    () =>
      Effect.gen(function* () {
        // The same GPUs (same uuids) in both clusters is the hardest case for keys without the cluster.
        const gpus = hostGpus("a", 4)
        const run = (cluster: string, node: typeof nodeA) =>
          Effect.scoped(
            Effect.gen(function* () {
              const current = yield* replica("shared", cluster)
              yield* current.processor.observe(read(node, new Date(), gpus))
              yield* current.processor.flush
              return current.events
            }),
          )
        assert.deepStrictEqual(kinds(yield* run("prod-eu", nodeA)), Array(4).fill("added"))
        assert.deepStrictEqual(kinds(yield* run("prod-us", nodeB)), Array(4).fill("added"))

        assert.deepStrictEqual(kinds(yield* run("prod-eu", nodeA)), [])
        assert.deepStrictEqual(kinds(yield* run("prod-us", nodeB)), [])

        const eu = parseLocatedGpu((yield* storedValue("shared", `prod-eu.uuid.${gpus[0]?.uuid}`)) ?? "")
        const us = parseLocatedGpu((yield* storedValue("shared", `prod-us.uuid.${gpus[0]?.uuid}`)) ?? "")
        assert.deepStrictEqual([eu?.cluster, eu?.node], ["prod-eu", nodeA.name])
        assert.deepStrictEqual([us?.cluster, us?.node], ["prod-us", nodeB.name])
      }),
  )

  it.live("ignores entries of the layout without a cluster that are still in the bucket", () =>
    Effect.gen(function* () {
      const [gpu] = hostGpus("a", 1)
      if (gpu === undefined) return
      const time = new Date("2026-01-01T00:00:00Z")
      const kv = yield* Effect.promise(() => new Kvm(connection).create("legacy"))
      const legacy = JSON.stringify(locatedGpu(knownAt(gpu, nodeA, time), "prod-eu", undefined))
      yield* Effect.promise(() => kv.put(`uuid.${gpu.uuid}`, legacy))
      yield* Effect.promise(() => kv.put(`serial.${gpu.serial}.${gpu.uuid}`, "not json"))
      const store = yield* storeOf("legacy")
      assert.deepStrictEqual(yield* store.load, [])
      yield* store.apply([upsert(knownAt(gpu, nodeA, time))])
      assert.strictEqual((yield* store.load).length, 1)
    }),
  )
})
