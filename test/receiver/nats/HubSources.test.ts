import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as NatsExporter from "../../../src/exporter/nats/NatsExporter.ts"
import { streamConfig } from "../../../src/exporter/nats/NatsStream.ts"
import { ensureHubStream } from "../../../src/receiver/nats/HubSources.ts"
import { type NatsTopology, startNatsTopology } from "../../support/NatsTopology.ts"

const clusters = ["east", "west"] as const
const prefix = "gpu.serials"
const clusterStream = "GPU_SERIALS"
const hubStream = "GPU_SERIALS_HUB"

let topology: NatsTopology
const leaves = new Map<string, NatsConnection>()
let hub: NatsConnection

beforeAll(async () => {
  topology = await startNatsTopology(clusters)
  for (const cluster of clusters) {
    const connection = await connect({ servers: topology.leaf(cluster).url })
    leaves.set(cluster, connection)
    await (await jetstreamManager(connection)).streams.add(
      streamConfig(clusterStream, prefix, NatsExporter.factory.defaultConfig.streamSettings),
    )
  }
  hub = await connect({ servers: topology.hub.url })
}, 60_000)

afterAll(async () => {
  await Promise.all([...leaves.values()].map((connection) => connection.close()))
  await hub?.close()
  await topology?.dispose()
})

const eventually = async (what: string, condition: () => Promise<boolean>) => {
  for (let attempt = 0; !(await condition()); attempt++) {
    if (attempt >= 300) throw new Error(`gave up waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const leafMessages = async (cluster: string) => {
  const connection = leaves.get(cluster)
  if (connection === undefined) throw new Error(`no leaf ${cluster}`)
  return (await (await jetstreamManager(connection)).streams.info(clusterStream)).state.messages
}

describe("the hub stream's sources", () => {
  it("copy each cluster's own records once, though every leaf's stream also stores the other clusters'", async () => {
    const manager = await jetstreamManager(hub)
    await Effect.runPromise(ensureHubStream(manager, hubStream, clusterStream, prefix, clusters))
    // Without a record id, so that the hub stream's duplicate window cannot hide a second copy.
    for (const node of ["e-1", "e-2", "e-3"]) {
      await jetstream(leaves.get("east") as NatsConnection).publish(`${prefix}.east.${node}.added`, node)
    }
    for (const node of ["w-1", "w-2"]) {
      await jetstream(leaves.get("west") as NatsConnection).publish(`${prefix}.west.${node}.added`, node)
    }
    // The leaves share one account: each cluster's stream takes the other's subjects over the leaf links.
    await eventually("both leaves' streams hold all five records", async () => {
      const held = await Promise.all(clusters.map(leafMessages))
      return held.every((count) => count === 5)
    })
    await eventually("the hub stream's sources have copied everything", async () => {
      const info = await manager.streams.info(hubStream)
      return (
        info.state.messages >= 5 && (info.sources ?? []).length === 2 && (info.sources ?? []).every((s) => s.lag === 0)
      )
    })
    const info = await manager.streams.info(hubStream)
    const subjects: Array<string> = []
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const message = await manager.streams.getMessage(hubStream, { seq })
      if (message !== null) subjects.push(message.subject)
    }
    expect(subjects.sort()).toEqual([
      `${prefix}.east.e-1.added`,
      `${prefix}.east.e-2.added`,
      `${prefix}.east.e-3.added`,
      `${prefix}.west.w-1.added`,
      `${prefix}.west.w-2.added`,
    ])
  }, 90_000)
})
