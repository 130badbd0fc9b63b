import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { GpuRecord } from "../../src/domain/GpuRecord.ts"
import { HealthServer } from "../../src/health/HealthServer.ts"
import { ServiceMetrics } from "../../src/metrics/ServiceMetrics.ts"
import { addedEvent } from "../exporter/InventoryEvents.ts"
import { telemetryLayer } from "../metrics/TelemetryLayers.ts"

const fleet = 80_000
const scrapes = 20

/** 80,000 distinct GPUs, as the inventory of a 10,000-node cluster of 8 GPUs each holds them. */
const gpus: ReadonlyArray<GpuRecord> = Array.from({ length: fleet }, (_, n) => {
  const { record } = addedEvent(n)
  return {
    ...record,
    node: `gpu-node-${Math.floor(n / 8)}`,
    uuid: `GPU-${n.toString(16).padStart(8, "0")}-1111-2222-3333-444444444444`,
  }
})

describe("/metrics of a fleet of 80,000 GPUs under 20 scrapes at once", () => {
  it.live(
    "serves every GPU to every scrape, while /healthz is answered before any scrape ends",
    () =>
      Effect.gen(function* () {
        const metrics = yield* ServiceMetrics
        yield* metrics.observeGpus({ gpus: () => gpus, fields: (gpu: GpuRecord) => gpu })
        const { port } = yield* HealthServer
        const url = (path: string) => `http://127.0.0.1:${port}${path}`
        const done: Array<string> = []
        const scraped = Effect.promise(() =>
          Promise.all(
            Array.from({ length: scrapes }, async () => {
              const body = await (await fetch(url("/metrics"))).text()
              done.push("metrics")
              return body
            }),
          ),
        )
        // Asked once every scrape is under way: a server writing one whole exposition at a time would answer it last.
        const live = Effect.promise(async () => {
          await new Promise((resolve) => setTimeout(resolve, 50))
          const answer = await fetch(url("/healthz"))
          done.push("healthz")
          return answer.status
        })
        const [bodies, status] = yield* Effect.all([scraped, live], { concurrency: "unbounded" })

        assert.strictEqual(status, 200)
        assert.strictEqual(done[0], "healthz")
        for (const body of bodies) {
          const series = body.split("\n").filter((line) => line.startsWith("gpu_serials_gpu_info{"))
          assert.strictEqual(series.length, fleet)
          assert.strictEqual(body.match(/^# TYPE gpu_serials_gpu_info gauge$/gm)?.length, 1)
        }
      }).pipe(Effect.provide(telemetryLayer()), Effect.scoped),
    120_000,
  )
})
