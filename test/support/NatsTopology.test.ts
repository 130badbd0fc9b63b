import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type NatsTopology, startNatsTopology } from "./NatsTopology.ts"

let topology: NatsTopology
const connections: Array<NatsConnection> = []

const connectTo = async (url: string) => {
  const connection = await connect({ servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 200 })
  connections.push(connection)
  return connection
}

beforeAll(async () => {
  topology = await startNatsTopology(["east", "west"])
}, 60_000)

afterAll(async () => {
  await Promise.all(connections.map((connection) => connection.close()))
  await topology?.dispose()
})

/** Polls `read` every 200 ms until it returns `expected`, for at most `attempts` tries. */
const eventually = async <A>(read: () => Promise<A>, expected: A, attempts = 100): Promise<A> => {
  let last = await read()
  for (let attempt = 1; attempt < attempts && JSON.stringify(last) !== JSON.stringify(expected); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    last = await read()
  }
  return last
}

describe("a hub and leaves with JetStream domains", () => {
  it("sources each leaf's stream into a hub stream by domain, and catches up after the hub was away", async () => {
    for (const cluster of ["east", "west"]) {
      const leaf = await connectTo(topology.leaf(cluster).url)
      const manager = await jetstreamManager(leaf)
      await manager.streams.add({ name: "GPU_EVENTS", subjects: [`gpu.${cluster}.>`] })
      await jetstream(leaf).publish(`gpu.${cluster}.node-1.added`, "first", { msgID: `${cluster}-1` })
    }
    const hub = await connectTo(topology.hub.url)
    const hubManager = await jetstreamManager(hub)
    await hubManager.streams.add({
      name: "GPU_FLEET",
      subjects: [],
      sources: ["east", "west"].map((cluster) => ({ name: "GPU_EVENTS", domain: cluster })),
    })
    const hubCount = async () => {
      try {
        return (await hubManager.streams.info("GPU_FLEET")).state.messages
      } catch {
        return -1
      }
    }
    expect(await eventually(hubCount, 2)).toBe(2)

    await topology.hub.stop()
    const east = await connectTo(topology.leaf("east").url)
    for (let index = 2; index <= 5; index++) {
      await jetstream(east).publish(`gpu.east.node-1.added`, `while away ${index}`, { msgID: `east-${index}` })
    }
    await topology.hub.start()
    expect(await eventually(hubCount, 6)).toBe(6)

    await topology.leaf("west").cut()
    expect(topology.leaf("west").linked()).toBe(false)
    const west = await connectTo(topology.leaf("west").url)
    await jetstream(west).publish("gpu.west.node-2.added", "cut off", { msgID: "west-2" })
    await topology.leaf("west").link()
    expect(await eventually(hubCount, 7)).toBe(7)
  }, 60_000)
})
