import { Effect, Exit, Result, Scope } from "effect"
import type { InventoryEvent } from "../src/domain/InventoryEvent.ts"
import { factory } from "../src/exporter/http/HttpExporter.ts"
import { fleetEvents, benchGpusPerNode as gpusPerNode, benchNodes as nodes } from "./BenchFleet.ts"
import { exporterThroughput } from "./ExporterThroughput.ts"
import { startLocalHttpReceiver } from "./LocalHttpReceiver.ts"

const rounds = 5
const recordsBudgetPerSecond = 5_000

interface Variant {
  readonly format: "json" | "ndjson"
  readonly compression: "gzip" | "none"
}

const measure = (url: string, variant: Variant, events: ReadonlyArray<InventoryEvent>) =>
  Effect.gen(function* () {
    const config = factory.validate({ endpoint: url, authToken: "bench", ...variant })
    if (Result.isFailure(config)) return yield* Effect.die(new Error(JSON.stringify(config.failure)))
    const scope = yield* Scope.make()
    const exporter = yield* factory
      .create(config.success, { id: "http", clusterName: "bench", serviceVersion: "bench" })
      .pipe(Scope.provide(scope))
    const figure = yield* exporterThroughput(
      exporter,
      Array.from({ length: rounds }, () => events),
      "60 seconds",
    )
    yield* Scope.close(scope, Exit.void)
    return figure
  })

/** Records per second through the `http` exporter into a local receiver, JSON and NDJSON, with and without gzip. */
export const httpBench = async (): Promise<ReadonlyArray<string>> => {
  const receiver = await startLocalHttpReceiver({ path: "/gpus" })
  const events = fleetEvents(0)
  const lines = [
    `http exporter (${nodes} nodes × ${gpusPerNode} GPUs, batches of 500, budget ≥ ${recordsBudgetPerSecond} records/s on one core)`,
  ]
  try {
    await Effect.runPromise(measure(receiver.url, { format: "json", compression: "none" }, events.slice(0, 2_000)))
    const variants: ReadonlyArray<Variant> = [
      { format: "json", compression: "none" },
      { format: "json", compression: "gzip" },
      { format: "ndjson", compression: "none" },
    ]
    for (const variant of variants) {
      const figure = await Effect.runPromise(measure(receiver.url, variant, events))
      lines.push(
        `  ${variant.format}, compression ${variant.compression}: ${figure.recordsPerSecond.toFixed(0)} records/s ` +
          `(${(figure.recordsPerSecond / recordsBudgetPerSecond).toFixed(1)}× the budget), ` +
          `${(figure.cpuMicrosPerRecord / 1000).toFixed(3)} ms CPU per record, ${figure.records} sent, ${figure.dropped} dropped`,
      )
    }
  } finally {
    await receiver.stop()
  }
  return lines
}
