import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import type { InventoryEvent } from "../src/domain/InventoryEvent.ts"
import type { NatsExporterConfig } from "../src/exporter/nats/NatsConfig.ts"
import { factory } from "../src/exporter/nats/NatsExporter.ts"
import { fleetEvents, benchGpusPerNode as gpusPerNode, benchNodes as nodes } from "./BenchFleet.ts"
import { exporterThroughput } from "./ExporterThroughput.ts"

const rounds = 5

/** nats-server with JetStream in its own process and store folder, on a random port. */
const startServer = async () => {
  const storeDir = mkdtempSync(join(tmpdir(), "gpu-serials-nats-bench-"))
  const child: ChildProcess = spawn("/usr/sbin/nats-server", ["-js", "-sd", storeDir, "-a", "127.0.0.1", "-p", "-1"], {
    stdio: ["ignore", "ignore", "pipe"],
  })
  const port = await new Promise<number>((resolve, reject) => {
    let log = ""
    const timer = setTimeout(() => reject(new Error(`nats-server did not start:\n${log}`)), 10_000)
    child.stderr?.on("data", (chunk: Buffer) => {
      log += chunk.toString("utf8")
      const match = /Listening for client connections on [^\s:]+:(\d+)/.exec(log)
      if (match?.[1] !== undefined && log.includes("Server is ready")) {
        clearTimeout(timer)
        resolve(Number(match[1]))
      }
    })
  })
  return {
    url: `nats://127.0.0.1:${port}`,
    stop: async () => {
      await new Promise<void>((resolve) => child.once("exit", () => resolve()).kill("SIGTERM"))
      rmSync(storeDir, { recursive: true, force: true })
    },
  }
}

const measure = (config: NatsExporterConfig, batches: ReadonlyArray<ReadonlyArray<InventoryEvent>>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const exporter = yield* factory
      .create(config, { id: "nats", clusterName: "bench", serviceVersion: "bench" })
      .pipe(Scope.provide(scope))
    // The connection is made in the background: wait for it with a first event, outside the figures.
    const [first, ...rest] = batches
    yield* exporter.export((first ?? []).slice(0, 1))
    while ((yield* exporter.stats).sent < 1) yield* Effect.sleep("10 millis")
    const figure = yield* exporterThroughput(exporter, [(first ?? []).slice(1), ...rest], "120 seconds")
    yield* Scope.close(scope, Exit.void)
    return figure
  })

/** Events per second through the `nats` exporter into a local nats-server: core publish, and JetStream with acks. */
export const natsBench = async (): Promise<ReadonlyArray<string>> => {
  const server = await startServer()
  const lines = [`nats exporter (${nodes} nodes × ${gpusPerNode} GPUs × ${rounds} rounds, default queue settings)`]
  try {
    const base = { ...factory.defaultConfig, servers: [server.url] }
    const modes = [
      ["core NATS, publish + flush", { ...base, subjectPrefix: "bench.core" }],
      ["JetStream, acked, file storage", { ...base, subjectPrefix: "bench.js", stream: "BENCH" }],
    ] as const
    for (const [label, config] of modes) {
      const batches = Array.from({ length: rounds }, (_, round) => fleetEvents(round))
      const figure = await Effect.runPromise(measure(config, batches))
      lines.push(
        `  ${label}: ${figure.recordsPerSecond.toFixed(0)} events/s, ` +
          `${(figure.cpuMicrosPerRecord / 1000).toFixed(3)} ms CPU per event, ${figure.records} sent, ${figure.dropped} dropped`,
      )
    }
  } finally {
    await server.stop()
  }
  return lines
}
