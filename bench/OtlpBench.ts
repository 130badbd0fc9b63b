import { spawn } from "node:child_process"
import { Effect, Exit, Result, Scope } from "effect"
import type { InventoryEvent } from "../src/domain/InventoryEvent.ts"
import { factory } from "../src/exporter/otlp/OtlpExporter.ts"
import { fleetEvents, benchGpusPerNode as gpusPerNode, benchNodes as nodes } from "./BenchFleet.ts"

const rounds = 5
const pace = 500
const recordsBudgetPerSecond = 5_000

/** A receiver in its own process, so the figures below are the exporter's alone. It answers 200 to all. */
const receiverSource = `
import { createServer } from "node:http"
const server = createServer((request, response) => {
  request.on("data", () => {})
  request.on("end", () => { response.writeHead(200, { "content-type": "application/x-protobuf" }); response.end() })
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
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => child.once("exit", () => resolve()).kill("SIGTERM")),
  }
}

const measure = (url: string, compression: "gzip" | "none", events: ReadonlyArray<InventoryEvent>) =>
  Effect.gen(function* () {
    const config = factory.validate({ endpoint: url, compression, metricsInterval: "0s" })
    if (Result.isFailure(config)) return yield* Effect.die(new Error(JSON.stringify(config.failure)))
    const scope = yield* Scope.make()
    const exporter = yield* factory
      .create(config.success, { id: "otlp", clusterName: "bench", serviceVersion: "bench" })
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

/** Records per second through the `otlp` exporter into a local receiver, protobuf with and without gzip. */
export const otlpBench = async (): Promise<ReadonlyArray<string>> => {
  const receiver = await startReceiver()
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
