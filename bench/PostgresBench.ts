import { randomBytes } from "node:crypto"
import { Effect, Exit, Scope } from "effect"
import pg from "pg"
import type { InventoryEvent } from "../src/domain/InventoryEvent.ts"
import type { PostgresExporterConfig } from "../src/exporter/postgres/PostgresConfig.ts"
import { factory } from "../src/exporter/postgres/PostgresExporter.ts"
import { fleetEvents, benchGpusPerNode as gpusPerNode, benchNodes as nodes } from "./BenchFleet.ts"
import { exporterThroughput } from "./ExporterThroughput.ts"

const rounds = 5

/** The local PostgreSQL (trust authentication), as the tests use it; `PGUSER` picks another role. */
const server = { host: "127.0.0.1", port: 5432, user: process.env.PGUSER ?? "postgres" }

const admin = async (statement: string): Promise<void> => {
  const client = new pg.Client({ ...server, database: "test" })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

const measure = (config: PostgresExporterConfig, batches: ReadonlyArray<ReadonlyArray<InventoryEvent>>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const exporter = yield* factory
      .create(config, { id: "postgres", clusterName: "bench", serviceVersion: "bench" })
      .pipe(Scope.provide(scope))
    const figure = yield* exporterThroughput(exporter, batches, "120 seconds")
    yield* Scope.close(scope, Exit.void)
    return figure
  })

/**
 * Events per second through the `postgres` exporter into the local PostgreSQL, in a database of its
 * own: the first round inserts every GPU's current row, the later ones update them.
 */
export const postgresBench = async (): Promise<ReadonlyArray<string>> => {
  const database = `gpu_serials_bench_${randomBytes(4).toString("hex")}`
  const lines = [`postgres exporter (${nodes} nodes × ${gpusPerNode} GPUs × ${rounds} rounds, default queue settings)`]
  await admin(`CREATE DATABASE ${database}`)
  try {
    const config: PostgresExporterConfig = {
      ...factory.defaultConfig,
      connection: { ...server, database, password: "", sslmode: "disable" },
      autoMigrate: true,
    }
    const batches = Array.from({ length: rounds }, (_, round) => fleetEvents(round))
    const figure = await Effect.runPromise(measure(config, batches))
    lines.push(
      `  history + current state, one transaction per batch of ${config.queue.batchSize}: ` +
        `${figure.recordsPerSecond.toFixed(0)} events/s, ` +
        `${(figure.cpuMicrosPerRecord / 1000).toFixed(3)} ms CPU per event, ${figure.records} sent, ${figure.dropped} dropped`,
    )
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  }
  return lines
}
