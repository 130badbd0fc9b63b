import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { jetstreamManager } from "@nats-io/jetstream"
import { connect, headers } from "@nats-io/transport-node"
import { heartbeatSchema } from "../src/domain/ClusterHeartbeat.ts"
import type { GpuRecord } from "../src/domain/GpuRecord.ts"
import { natsMessage } from "../src/exporter/nats/NatsMessage.ts"
import { heartbeatSubject } from "../src/exporter/nats/NatsSubject.ts"
import { freePort } from "../src/health/FreePort.ts"
import { startNatsServer } from "../test/exporter/nats/NatsServer.ts"
import { measuredCore, pinToCore, simulatorCore } from "./CorePinning.ts"
import {
  clusterName,
  gpuOf,
  gpusPerNode,
  hubClusters,
  hubGpusPerCluster,
  hubRecord,
  startMinute,
} from "./HubFleetRecords.ts"
import {
  heapFigures,
  peakRssMegabytes,
  rssMegabytes,
  startServiceProcess,
  stopServiceProcess,
} from "./ServiceProcess.ts"

/** Per cluster: GPUs moved to another node of the cluster, removed for good, and swapped to the next cluster. */
const movedPerCluster = 10
const removedPerCluster = 10
const swappedPerCluster = 5
/**
 * The records the hub writes for the stream: every record but the heartbeats, the removals it holds (their
 * window open) and the swapped boards' removals, each of which becomes part of one cross-cluster `moved`.
 */
const expectedRecords = hubClusters * (2 * hubGpusPerCluster + movedPerCluster + swappedPerCluster)
/** Consecutive messages of one cluster in the hub stream, as a source copies them in turns. */
const sourceTurn = 50
const prefix = "gpu.serials"
const hubStream = "GPU_SERIALS_HUB"
const clusterStream = "GPU_SERIALS"
/** The PRODUCT's goals for the hub (issue 26): catch-up rate and peak RSS. */
const goalEventsPerSecond = 20_000
const goalRssMegabytes = 300
const catchUpTimeoutMs = 10 * 60_000
const pollIntervalMs = 200

/** One message as a cluster's exporter writes it: subject, headers (`Nats-Msg-Id` …) and payload. */
type HubMessage =
  | { readonly _tag: "Record"; readonly record: GpuRecord }
  | { readonly _tag: "Heartbeat"; readonly cluster: string; readonly minute: number }

/**
 * One cluster's stream, in its order: every GPU `added`, then `observed` (a report), then moves within the
 * cluster, removals for good, the GPUs swapped to the next cluster `removed` and the ones swapped in from the
 * previous cluster `added`, each phase followed by a heartbeat.
 */
const clusterMessages = (cluster: number): Array<HubMessage> => {
  const nodeOf = (at: number) => Math.floor(at / gpusPerNode)
  const messages: Array<HubMessage> = []
  const heartbeat = (minute: number) => messages.push({ _tag: "Heartbeat", cluster: clusterName(cluster), minute })
  for (let at = 0; at < hubGpusPerCluster; at++)
    messages.push({ _tag: "Record", record: hubRecord(gpuOf(cluster, at), cluster, nodeOf(at), 0, "added") })
  heartbeat(0)
  for (let at = 0; at < hubGpusPerCluster; at++)
    messages.push({ _tag: "Record", record: hubRecord(gpuOf(cluster, at), cluster, nodeOf(at), 1, "observed") })
  heartbeat(1)
  const lastNode = nodeOf(hubGpusPerCluster - 1) + 1
  for (let at = 0; at < movedPerCluster; at++)
    messages.push({ _tag: "Record", record: hubRecord(gpuOf(cluster, at), cluster, lastNode, 2, "moved") })
  for (let at = movedPerCluster; at < movedPerCluster + removedPerCluster; at++)
    messages.push({ _tag: "Record", record: hubRecord(gpuOf(cluster, at), cluster, nodeOf(at), 2, "removed") })
  const swapFrom = hubGpusPerCluster - swappedPerCluster
  for (let at = swapFrom; at < hubGpusPerCluster; at++)
    messages.push({ _tag: "Record", record: hubRecord(gpuOf(cluster, at), cluster, nodeOf(at), 3, "removed") })
  const previous = (cluster + hubClusters - 1) % hubClusters
  for (let at = swapFrom; at < hubGpusPerCluster; at++)
    messages.push({ _tag: "Record", record: hubRecord(gpuOf(previous, at), cluster, lastNode, 4, "added") })
  heartbeat(4)
  return messages
}

/** The minute a message was written in, from the bench's first. */
const minuteOf = (message: HubMessage): number =>
  message._tag === "Heartbeat" ? message.minute : Date.parse(message.record.time) / 60_000 - startMinute

/**
 * Every cluster's stream, minute by minute, the clusters' messages of a minute interleaved in turns of
 * `sourceTurn`, as the hub stream's sources copy them while the clusters write: each cluster's order is
 * kept, and a swapped board's removal comes before its arrival in the next cluster.
 */
const hubStreamMessages = (): Array<HubMessage> => {
  const streams = Array.from({ length: hubClusters }, (_, cluster) => clusterMessages(cluster))
  const lastMinute = streams.flat().reduce((last, message) => Math.max(last, minuteOf(message)), 0)
  const interleaved: Array<HubMessage> = []
  for (let minute = 0; minute <= lastMinute; minute++) {
    const ofMinute = streams.map((stream) => stream.filter((message) => minuteOf(message) === minute))
    const longest = Math.max(...ofMinute.map((stream) => stream.length))
    for (let from = 0; from < longest; from += sourceTurn)
      for (const stream of ofMinute) interleaved.push(...stream.slice(from, from + sourceTurn))
  }
  return interleaved
}

const encoder = new TextEncoder()

/** Fills the hub stream (its sources listed, subjects added) with the clusters' messages; returns its last sequence. */
const fillHubStream = async (url: string, messages: ReadonlyArray<HubMessage>): Promise<number> => {
  const connection = await connect({ servers: url, timeout: 10_000 })
  try {
    const manager = await jetstreamManager(connection, { timeout: 30_000 })
    await manager.streams.add({
      name: hubStream,
      subjects: [`${prefix}.>`],
      sources: Array.from({ length: hubClusters }, (_, cluster) => ({
        name: clusterStream,
        domain: clusterName(cluster),
      })),
      duplicate_window: 2 * 60 * 1_000_000_000,
    })
    let sent = 0
    for (const message of messages) {
      if (message._tag === "Record") {
        const { subject, headers, payload } = natsMessage(prefix, { record: message.record, origin: {} })
        connection.publish(subject, payload, { headers })
      } else {
        const time = new Date((startMinute + message.minute) * 60_000).toISOString()
        const payload = encoder.encode(JSON.stringify({ schema: heartbeatSchema, cluster: message.cluster, time }))
        const heartbeatHeaders = headers()
        heartbeatHeaders.set("Nats-Msg-Id", `heartbeat.${message.cluster}.${time}`)
        connection.publish(heartbeatSubject(prefix, message.cluster), payload, { headers: heartbeatHeaders })
      }
      sent++
      if (sent % 2_000 === 0) await connection.flush()
    }
    await connection.flush()
    const deadline = performance.now() + 120_000
    for (;;) {
      const info = await manager.streams.info(hubStream)
      if (info.state.messages >= messages.length) return info.state.last_seq
      if (performance.now() > deadline)
        throw new Error(`the hub stream holds ${info.state.messages} of ${messages.length} messages`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  } finally {
    await connection.close()
  }
}

const hubConfig = (url: string): string =>
  [
    "cluster: { name: fleet }",
    "receivers:",
    `  nats: { url: "${url}", clusters: [${Array.from({ length: hubClusters }, (_, cluster) => clusterName(cluster)).join(", ")}] }`,
    "processors:",
    "  fleet: {}",
    "exporters: { stdout: }",
    "service: { pipelines: { gpus: { receivers: [nats], processors: [fleet], exporters: [stdout] } } }",
    "",
  ].join("\n")

export interface HubRun {
  readonly messages: number
  /** From the spawn to the consumer's ack floor at the last message and the last record on stdout. */
  readonly seconds: number
  /** From the first acknowledgement seen to the end: the catch-up without the service's start. */
  readonly catchUpSeconds: number
  readonly records: number
  readonly crossClusterMoves: number
  readonly peakRssMegabytes: number
  readonly liveHeapMegabytes: number
  readonly pinned: boolean
}

/** One run: a fresh nats-server, the hub stream filled, the hub service started and timed until all is applied. */
export const hubRun = async (): Promise<HubRun> => {
  const server = await startNatsServer()
  const folder = mkdtempSync(join(tmpdir(), "gpu-serials-hub-bench-"))
  try {
    const messages = hubStreamMessages()
    const lastSequence = await fillHubStream(server.url, messages)
    const configPath = join(folder, "hub.yaml")
    writeFileSync(configPath, hubConfig(server.url))
    const watcher = await connect({ servers: server.url, timeout: 10_000 })
    const manager = await jetstreamManager(watcher, { timeout: 10_000 })
    const port = await freePort()
    let records = 0
    let crossClusterMoves = 0
    const service = startServiceProcess(["--config", configPath, "--server-port", String(port)], (line) => {
      records++
      if ((line as { previousCluster?: string }).previousCluster !== undefined) crossClusterMoves++
    })
    const pid = service.child.pid ?? 0
    const pinned = pinToCore(pid, measuredCore)
    let peakSampled = 0
    try {
      let firstAckAt: number | undefined
      let doneAt: number | undefined
      while (doneAt === undefined) {
        if (service.child.exitCode !== null) throw new Error(`the hub exited (${service.child.exitCode})`)
        if (performance.now() - service.startedAt > catchUpTimeoutMs)
          throw new Error(`the hub did not apply ${messages.length} messages within ${catchUpTimeoutMs / 1000} s`)
        peakSampled = Math.max(peakSampled, rssMegabytes(pid))
        const info = await manager.consumers.info(hubStream, "gpu-serials-hub").catch(() => undefined)
        const floor = info?.ack_floor.stream_seq ?? 0
        const now = performance.now()
        if (floor > 0 && firstAckAt === undefined) firstAckAt = now
        if (floor >= lastSequence && records >= expectedRecords) doneAt = now
        else await new Promise((resolve) => setTimeout(resolve, pollIntervalMs))
      }
      const heap = await heapFigures(service)
      return {
        messages: messages.length,
        seconds: (doneAt - service.startedAt) / 1000,
        catchUpSeconds: (doneAt - (firstAckAt ?? service.startedAt)) / 1000,
        records,
        crossClusterMoves,
        peakRssMegabytes: Math.max(peakSampled, peakRssMegabytes(pid)),
        liveHeapMegabytes: heap.liveMegabytes,
        pinned,
      }
    } finally {
      await stopServiceProcess(service)
      await watcher.close()
    }
  } finally {
    await server.dispose()
    rmSync(folder, { recursive: true, force: true })
  }
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((left, right) => left - right)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

/**
 * `npm run bench -- hub`: the hub service (`gpu-serials run`, receiver `nats`, processor `fleet`, exporter
 * `stdout`) catching up on a hub stream that holds what 100 clusters × 1,000 GPUs wrote; its rate and its
 * peak RSS, min / median of `runs`.
 */
export const hubBench = async (runs: number): Promise<ReadonlyArray<string>> => {
  const results: Array<HubRun> = []
  // The bench on a core of its own too, so that reading the hub's stdout takes nothing from the hub's core.
  pinToCore(process.pid, simulatorCore)
  try {
    for (let run = 0; run < runs; run++) results.push(await hubRun())
  } finally {
    spawnSync("taskset", ["-a", "-pc", `0-${cpus().length - 1}`, String(process.pid)], { stdio: "ignore" })
  }
  const first = results[0]
  if (first === undefined) return []
  const rates = results.map((result) => result.messages / result.seconds)
  const catchUpRates = results.map((result) => result.messages / result.catchUpSeconds)
  const rss = results.map((result) => result.peakRssMegabytes)
  const heap = results.map((result) => result.liveHeapMegabytes)
  const rate = median(rates)
  const peak = median(rss)
  return [
    `hub (${hubClusters} clusters × ${hubGpusPerCluster.toLocaleString("en")} GPUs, ${first.messages.toLocaleString("en")} messages: ` +
      "a hub stream filled beforehand with what its sources copy from the clusters' streams, each message as " +
      "the nats exporter writes it; the compiled CLI's `run` with receiver nats, processor fleet, exporter stdout; " +
      `${first.pinned ? `the hub pinned to core ${measuredCore}, the bench to core ${simulatorCore}, nats-server unpinned` : "unpinned"}; ${runs} run(s))`,
    `  catch-up, spawn to the last message acknowledged and the last record on stdout: min ${Math.min(...rates).toFixed(0)} / median ${rate.toFixed(0)} events/s ` +
      `(goal ≥ ${goalEventsPerSecond.toLocaleString("en")}: ${(rate / goalEventsPerSecond).toFixed(2)}× the goal)`,
    `  catch-up, first acknowledgement to the end (without the start): min ${Math.min(...catchUpRates).toFixed(0)} / median ${median(catchUpRates).toFixed(0)} events/s`,
    `  peak RSS: min ${Math.min(...rss).toFixed(0)} / median ${peak.toFixed(0)} MB (goal ≤ ${goalRssMegabytes}: ${(peak / goalRssMegabytes).toFixed(2)} of it)`,
    `  live heap after GC at the end: min ${Math.min(...heap).toFixed(1)} / median ${median(heap).toFixed(1)} MB`,
    `  records on stdout: ${first.records.toLocaleString("en")}, of which cross-cluster moves: ${first.crossClusterMoves} (${hubClusters * swappedPerCluster} swapped)`,
  ]
}
