import { type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream"
import { connect, headers, type NatsConnection } from "@nats-io/transport-node"
import { Effect, Exit, Queue, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ClusterObservation } from "../../../src/domain/ClusterObservation.ts"
import * as NatsExporter from "../../../src/exporter/nats/NatsExporter.ts"
import { streamConfig } from "../../../src/exporter/nats/NatsStream.ts"
import * as HubNatsReceiver from "../../../src/receiver/nats/HubNatsReceiver.ts"
import { type NatsTopology, startNatsTopology } from "../../support/NatsTopology.ts"
import { recordingMetrics } from "../../support/RecordingMetrics.ts"

const prefix = "gpu.serials"
const clusterStream = "GPU_SERIALS"
/** A subject of the hub stream's own, for copies of sourced messages and for messages not sourced. */
const hubSubject = "gpu.hub.direct"

let topology: NatsTopology
let leaf: NatsConnection
let hub: NatsConnection
let hubManager: JetStreamManager

const config = () => ({
  ...HubNatsReceiver.factory.defaultConfig,
  servers: [topology.hub.url],
  clusters: ["east"],
  batchSize: 10,
})

const hubStream = () => config().stream

beforeAll(async () => {
  topology = await startNatsTopology(["east"])
  leaf = await connect({ servers: topology.leaf("east").url })
  await (await jetstreamManager(leaf)).streams.add(
    streamConfig(clusterStream, prefix, NatsExporter.factory.defaultConfig.streamSettings),
  )
  hub = await connect({ servers: topology.hub.url })
  hubManager = await jetstreamManager(hub)
}, 60_000)

afterAll(async () => {
  await leaf?.close()
  await hub?.close()
  await topology?.dispose()
})

const recordBody = (uuid: string) =>
  JSON.stringify({
    schema: "gpu-serials/v1",
    event: "added",
    id: `id-${uuid}`,
    cluster: "east",
    node: "e-1",
    machine: "e-1-vm",
    source: "gpu-operator/nvidia-device-plugin-daemonset-abcde",
    chassis: "",
    gpu: `serial-${uuid}`,
    time: new Date().toISOString(),
    uuid,
    index: 0,
    serialShared: false,
  })

/** A hub receiver running until `stop`; the ids it reports, each observation acknowledged as the processor would. */
const startReceiver = async () => {
  const metrics = recordingMetrics()
  const scope = await Effect.runPromise(Scope.make())
  const receiver = await Effect.runPromise(
    HubNatsReceiver.make(config(), { id: "nats", clusterName: "fleet", serviceVersion: "0.0.0-test" }).pipe(
      Scope.provide(scope),
      Effect.provide(metrics.layer),
    ),
  )
  const reported: Array<string> = []
  const drain = Effect.runPromise(
    Effect.gen(function* () {
      while (true) {
        const observation: ClusterObservation = yield* Queue.take(receiver.observations)
        if (observation._tag === "ClusterBatch") {
          reported.push(...observation.records.map((record) => record.uuid))
          yield* observation.acknowledge([])
        }
      }
    }).pipe(Effect.exit),
  )
  return {
    reported,
    recorded: metrics.recorded,
    stop: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await drain
    },
  }
}

const eventually = async (what: string, condition: () => boolean) => {
  for (let attempt = 0; !condition(); attempt++) {
    if (attempt >= 300) throw new Error(`gave up waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Puts into the hub stream, under new sequences, copies of its sourced messages `first..last`, headers and all. */
const copySourced = async (first: number, last: number) => {
  const js = jetstream(hub)
  for (let seq = first; seq <= last; seq++) {
    const message = await hubManager.streams.getMessage(hubStream(), { seq })
    if (message === null) throw new Error(`hub stream message ${seq} not found`)
    const copy = headers()
    copy.set("Nats-Stream-Source", message.header.get("Nats-Stream-Source"))
    await js.publish(hubSubject, message.data, { headers: copy })
  }
}

describe("a hub receiver given clusters' messages again under new hub stream sequences", () => {
  it("reports each sourced message once, across a restart, and still reports messages not sourced", async () => {
    const receiver = await startReceiver()
    const clusterJs = jetstream(leaf)
    for (const uuid of ["GPU-1", "GPU-2", "GPU-3"]) {
      await clusterJs.publish(`${prefix}.east.added`, recordBody(uuid), { msgID: `id-${uuid}` })
    }
    await eventually("the three records are reported", () => receiver.reported.length === 3)
    const info = await hubManager.streams.info(hubStream())
    expect(info.state.last_seq).toBe(3)
    // The hub stream takes copies on a subject of its own, as if the server had sourced them again.
    await hubManager.streams.update(hubStream(), { subjects: [hubSubject] })

    await copySourced(1, 3)
    await clusterJs.publish(`${prefix}.east.added`, recordBody("GPU-4"), { msgID: "id-GPU-4" })
    await eventually("the next record is reported", () => receiver.reported.includes("GPU-4"))
    expect(receiver.reported).toEqual(["GPU-1", "GPU-2", "GPU-3", "GPU-4"])
    expect(receiver.recorded.hubMessagesRepeated.count).toBeGreaterThanOrEqual(3)
    await receiver.stop()

    // Restarted, the hub knows from its state bucket what each source had applied.
    const restarted = await startReceiver()
    await copySourced(1, 3)
    await jetstream(hub).publish(hubSubject, recordBody("GPU-5"))
    await eventually("the message not sourced is reported", () => restarted.reported.includes("GPU-5"))
    expect(restarted.reported).toEqual(["GPU-5"])
    expect(restarted.recorded.hubMessagesRepeated.count).toBeGreaterThanOrEqual(3)
    await restarted.stop()
  }, 90_000)
})
