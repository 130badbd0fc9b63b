import { type JetStreamClient, jetstream, jetstreamManager } from "@nats-io/jetstream"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ServiceConfig } from "../../../src/config/ServiceConfig.ts"
import { type GpuRecord, recordSchema } from "../../../src/domain/GpuRecord.ts"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import { recordId } from "../../../src/domain/RecordId.ts"
import * as QueuedExporter from "../../../src/exporter/exporterhelper/QueuedExporter.ts"
import { defaultQueueSettings } from "../../../src/exporter/exporterhelper/QueueSettings.ts"
import * as NatsExporter from "../../../src/exporter/nats/NatsExporter.ts"
import { streamConfig } from "../../../src/exporter/nats/NatsStream.ts"
import { eventSubject } from "../../../src/exporter/nats/NatsSubject.ts"
import { recordJson } from "../../../src/exporter/RecordJson.ts"
import type { ConfiguredExporter } from "../../../src/service/ComponentRegistry.ts"
import { capturingExporter } from "../../service/ServiceHarness.ts"
import { type NatsTopology, startNatsTopology } from "../../support/NatsTopology.ts"
import { hubServiceConfig, type RunningHub, startHub } from "../../support/RunningHub.ts"

const prefix = "gpu.serials"
const clusterStream = "GPU_SERIALS"
/** More records than the hub's batch, the exporter's buffer and the fan-out's lane hold together. */
const backlog = 1_200
const hubBatchSize = 200
const exporterQueueSize = 40

let topology: NatsTopology
let leaf: { connection: NatsConnection; js: JetStreamClient }

beforeAll(async () => {
  topology = await startNatsTopology(["east"])
  const connection = await connect({ servers: topology.leaf("east").url })
  leaf = { connection, js: jetstream(connection) }
  const manager = await jetstreamManager(connection)
  await manager.streams.add(streamConfig(clusterStream, prefix, NatsExporter.factory.defaultConfig.streamSettings))
}, 60_000)

afterAll(async () => {
  await leaf?.connection.close()
  await topology?.dispose()
})

const started = Date.now() - 60 * 60_000

/** The `added` record of GPU `index` of the cluster, as its nats exporter writes it. */
const added = (index: number): GpuRecord => {
  const node = `e-${Math.floor(index / 8)}`
  const uuid = `GPU-BACKLOG-${index}`
  const time = new Date(started + index * 1_000).toISOString()
  const machine = `${node}-vm`
  return {
    schema: recordSchema,
    event: "added",
    id: recordId({ cluster: "east", uuid, event: "added", node, machine, time }),
    cluster: "east",
    node,
    machine,
    source: "gpu-operator/nvidia-device-plugin-daemonset-abcde",
    chassis: "",
    gpu: `serial-${index}`,
    time,
    uuid,
    index: index % 8,
    serialShared: false,
  }
}

const hubConfig = (): ServiceConfig =>
  hubServiceConfig({ url: topology.hub.url, clusters: ["east"], batchSize: hubBatchSize, shutdownTimeout: "3s" })

/**
 * An exporter with a buffer smaller than one hub batch, whose sink writes nothing until `open` resolves
 * and then takes a little time for each small write.
 */
const slowExporter =
  (open: Promise<void>) =>
  (events: Array<InventoryEvent>): ConfiguredExporter => ({
    id: "slow",
    type: "slow",
    config: {},
    create: () =>
      QueuedExporter.make({
        id: "slow",
        settings: { ...defaultQueueSettings, queueSize: exporterQueueSize, batchSize: 10 },
        sink: {
          write: (batch) =>
            Effect.promise(() => open).pipe(
              Effect.andThen(Effect.sleep("2 millis")),
              Effect.andThen(Effect.sync(() => events.push(...batch))),
            ),
        },
      }),
  })

const eventually = async (hub: RunningHub, what: string, condition: () => Promise<boolean> | boolean) => {
  for (let attempt = 0; !(await condition()); attempt++) {
    const ended = hub.ended()
    if (ended !== undefined) throw new Error(`${ended} before ${what}`)
    if (attempt >= 1_200) throw new Error(`gave up waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const readiness = async (hub: RunningHub) => {
  const response = await fetch(`http://127.0.0.1:${hub.port()}/readyz`)
  return ((await response.json()) as { readonly checks: Record<string, string> }).checks
}

const waitSeconds = async (hub: RunningHub): Promise<number> => {
  const text = await (await fetch(`http://127.0.0.1:${hub.port()}/metrics`)).text()
  const line = text
    .split("\n")
    .find((row) => row.startsWith("gpu_serials_hub_export_wait_seconds_total") && row.includes('exporter="slow"'))
  return line === undefined ? 0 : Number(line.split(" ").at(-1))
}

/** Publishes a backlog of `added` records from GPU `from` on, as the cluster's exporter would. */
const publishBacklog = async (from: number): Promise<ReadonlyArray<GpuRecord>> => {
  const records = Array.from({ length: backlog }, (_, index) => added(from + index))
  await Promise.all(
    records.map((record) => leaf.js.publish(eventSubject(prefix, record), recordJson(record), { msgID: record.id })),
  )
  return records
}

const waits = (running: RunningHub) =>
  running.logs.some((line) => String(line.msg).startsWith("hub waits for exporters"))

/** Records the hub's exporters reported dropped while it stopped: held in the fan-out's lane or a buffer. */
const droppedAtStop = (running: RunningHub) =>
  running.logs
    .filter(
      (line) =>
        line.msg === "exporter stopped with records not written" ||
        line.msg === "exporter did not take its last batches",
    )
    .reduce((sum, line) => sum + Number(line.dropped), 0)

describe("a hub whose exporter is slower than its catch-up", () => {
  let hub: RunningHub | undefined

  afterAll(async () => {
    await hub?.stop()
  })

  it("waits for room in the exporter's buffer: every record of a backlog exported once, none dropped", async () => {
    const records = await publishBacklog(0)
    let openSink = () => {}
    const open = new Promise<void>((resolve) => {
      openSink = resolve
    })
    const running = startHub(hubConfig(), slowExporter(open))
    hub = running

    // The sink takes nothing: the hub holds the rest of the backlog in the stream and says so once.
    await eventually(running, "the hub logs that it waits for the slow exporter", () => waits(running))
    const warning = running.logs.find((line) => String(line.msg).startsWith("hub waits for exporters"))
    expect(warning).toMatchObject({ level: "warn", exporters: "slow" })
    await eventually(
      running,
      "/readyz names the full exporter",
      async () => (await readiness(running)).exporters?.includes("buffer full for") ?? false,
    )
    await eventually(running, "the wait is counted", async () => (await waitSeconds(running)) > 0)
    expect(running.events).toHaveLength(0)

    openSink()
    await eventually(running, "the backlog is exported", () => running.events.length >= backlog)
    // Some time for anything beyond the backlog (a repeat) to show.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const exported = running.events.map((event) => event.record.id)
    expect(exported).toHaveLength(backlog)
    expect(new Set(exported)).toEqual(new Set(records.map((record) => record.id)))
    expect(running.logs.filter((line) => String(line.msg).startsWith("hub waits for exporters"))).toHaveLength(1)
    expect(running.logs.some((line) => line.msg === "exporter buffer full, dropping records")).toBe(false)
  }, 180_000)

  it("stops while it waits, and after a restart exports what it had not acknowledged, once", async () => {
    await hub?.stop()
    const records = await publishBacklog(backlog)
    const stuck = startHub(hubConfig(), slowExporter(new Promise<void>(() => {})))
    hub = stuck
    await eventually(stuck, "the hub waits for the stuck exporter", () => waits(stuck))
    await stuck.stop()
    const lost = droppedAtStop(stuck)
    // What the hub acknowledged is the stuck exporter's buffer and lane, reported dropped at the stop.
    expect(lost).toBeGreaterThan(0)
    expect(lost).toBeLessThan(backlog)

    const restarted = startHub(hubConfig(), capturingExporter)
    hub = restarted
    await eventually(restarted, "the hub's consumer starts again at its first unacknowledged message", () =>
      restarted.logs.some((line) => line.msg === "hub consumer made again from its first unacknowledged message"),
    )
    const last = records.at(-1)?.id
    await eventually(restarted, "the restarted hub exports the rest of the backlog", () =>
      restarted.events.some((event) => event.record.id === last),
    )
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(restarted.events.map((event) => event.record.id)).toEqual(records.slice(lost).map((record) => record.id))
  }, 180_000)
})
