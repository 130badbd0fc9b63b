import { Effect, Exit, Result, Scope } from "effect"
import type { InventoryEvent } from "../src/domain/InventoryEvent.ts"
import { factory } from "../src/exporter/otlp/OtlpExporter.ts"
import { fleetEvents, benchGpusPerNode as gpusPerNode, benchNodes as nodes } from "./BenchFleet.ts"
import { exporterThroughput } from "./ExporterThroughput.ts"
import { startLocalHttpReceiver } from "./LocalHttpReceiver.ts"

const rounds = 5
const recordsBudgetPerSecond = 5_000

const measure = (url: string, compression: "gzip" | "none", events: ReadonlyArray<InventoryEvent>) =>
  Effect.gen(function* () {
    const config = factory.validate({ endpoint: url, compression, metricsInterval: "0s" })
    if (Result.isFailure(config)) return yield* Effect.die(new Error(JSON.stringify(config.failure)))
    const scope = yield* Scope.make()
    const exporter = yield* factory
      .create(config.success, { id: "otlp", clusterName: "bench", serviceVersion: "bench" })
      .pipe(Scope.provide(scope))
    const figure = yield* exporterThroughput(
      exporter,
      Array.from({ length: rounds }, () => events),
      "60 seconds",
    )
    yield* Scope.close(scope, Exit.void)
    return figure
  })

/** Records per second through the `otlp` exporter into a local receiver, protobuf with and without gzip. */
export const otlpBench = async (): Promise<ReadonlyArray<string>> => {
  const receiver = await startLocalHttpReceiver({ path: "", contentType: "application/x-protobuf" })
  const events = fleetEvents(0)
  const lines = [
    `otlp exporter (http/protobuf, ${nodes} nodes × ${gpusPerNode} GPUs, budget ≥ ${recordsBudgetPerSecond} records/s on one core)`,
  ]
  try {
    await Effect.runPromise(measure(receiver.url, "none", events.slice(0, 2_000)))
    for (const compression of ["none", "gzip"] as const) {
      const figure = await Effect.runPromise(measure(receiver.url, compression, events))
      lines.push(
        `  compression ${compression}: ${figure.recordsPerSecond.toFixed(0)} records/s ` +
          `(${(figure.recordsPerSecond / recordsBudgetPerSecond).toFixed(1)}× the budget), ` +
          `${(figure.cpuMicrosPerRecord / 1000).toFixed(3)} ms CPU per record, ${figure.records} sent, ${figure.dropped} dropped`,
      )
    }
  } finally {
    await receiver.stop()
  }
  return lines
}
