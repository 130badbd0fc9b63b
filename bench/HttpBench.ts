import { spawn } from "node:child_process"
import { Effect, Exit, Result, Scope } from "effect"
import type { InventoryEvent } from "../src/domain/InventoryEvent.ts"
import { factory } from "../src/exporter/http/HttpExporter.ts"
import { fleetEvents, benchGpusPerNode as gpusPerNode, benchNodes as nodes } from "./BenchFleet.ts"

const rounds = 5
const pace = 500
const recordsBudgetPerSecond = 5_000

/** A receiver in its own process, so the figures below are the exporter's alone. It reads every body and answers 200. */
const receiverSource = `
import { createServer } from "node:http"
const server = createServer((request, response) => {
  request.on("data", () => {})
  request.on("end", () => { response.writeHead(200); response.end() })
})
server.listen(0, "127.0.0.1", () => process.stdout.write(String(server.address().port) + "\\n"))
process.on("SIGTERM", () => server.close(() => process.exit(0)))
`

const startReceiver = async () => {
  const child = spawn(process.execPath, ["--input-type=module", "-e", receiverSource], {
    stdio: ["ignore", "pipe", "inherit"],
  })
  const port = await new Promise<number>((resolve) =>
    child.stdout.once("data", (chunk: Buffer) => resolve(Number(String(chunk).trim()))),
  )
  return {
    url: `http://127.0.0.1:${port}/gpus`,
    stop: () => new Promise<void>((resolve) => child.once("exit", () => resolve()).kill("SIGTERM")),
  }
}

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
    const cpuBefore = process.cpuUsage()
    const started = performance.now()
    for (let round = 0; round < rounds; round++) {
      for (let at = 0; at < events.length; at += pace) {
        yield* exporter.export(events.slice(at, at + pace))
        while ((yield* exporter.stats).queued > 5_000) yield* Effect.sleep("2 millis")
      }
    }
    yield* exporter.flush("60 seconds")
    const seconds = (performance.now() - started) / 1000
    const cpu = process.cpuUsage(cpuBefore)
    const stats = yield* exporter.stats
    yield* Scope.close(scope, Exit.void)
    const records = stats.sent
    return {
      recordsPerSecond: records / seconds,
      cpuMicrosPerRecord: (cpu.user + cpu.system) / records,
      dropped: stats.dropped,
      records,
    }
  })

/** Records per second through the `http` exporter into a local receiver, JSON and NDJSON, with and without gzip. */
export const httpBench = async (): Promise<ReadonlyArray<string>> => {
  const receiver = await startReceiver()
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
