import { Effect, Exit, Scope } from "effect"
import type { InventoryEvent } from "../src/domain/InventoryEvent.ts"
import type { NatsExporterConfig } from "../src/exporter/nats/NatsConfig.ts"
import { factory } from "../src/exporter/nats/NatsExporter.ts"
import { startNatsServer } from "../test/exporter/nats/NatsServer.ts"
import { fleetEvents, benchGpusPerNode as gpusPerNode, benchNodes as nodes } from "./BenchFleet.ts"
import { exporterThroughput } from "./ExporterThroughput.ts"

const rounds = 5

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
  const server = await startNatsServer()
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
    await server.dispose()
  }
  return lines
}
