import { Effect, Result } from "effect"
import { describe, expect, it } from "vitest"
import * as gpuSerials from "../src/index.ts"

describe("the library API", () => {
  it("exposes the parser, the record builder and the component factories", () => {
    const document = `<?xml version="1.0" ?><nvidia_smi_log><driver_version>570.86.15</driver_version><gpu id="00000000:04:00.0"><product_name>NVIDIA H100 80GB HBM3</product_name><serial>0652923034028</serial><uuid>GPU-ab6ab95d-8259-5551-5962-e4a7a710fbae</uuid></gpu></nvidia_smi_log>`
    const reading = gpuSerials.parseNvsmiOutput(document)
    if (Result.isFailure(reading)) throw new Error(reading.failure.message)
    const [record] = gpuSerials.readingRecords(
      reading.success,
      { cluster: "lab", node: "n1", source: "test", time: new Date(0) },
      "observed",
    )
    expect(record).toMatchObject({ gpu: "0652923034028", schema: gpuSerials.recordSchema, machine: "na" })
    expect(gpuSerials.builtinComponents.exporters?.map((factory) => factory.type)).toContain("stdout")
    expect(gpuSerials.builtinComponents.receivers?.map((factory) => factory.type)).toEqual(["kube_exec", "nats"])
  })

  it("loads the service's configuration from a config object, as an embedding program (or the demo) does", async () => {
    const loaded = await Effect.runPromise(
      gpuSerials
        .loadPipelineConfig({
          flags: gpuSerials.parseServiceFlags(["--workers", "4"]),
          env: {},
          base: {
            cluster: { name: "lab" },
            processors: { inventory: { removalGrace: "10s" } },
            exporters: { stdout: { queueSize: 100, batchSize: 10 } },
          },
          baseDir: process.cwd(),
        })
        .pipe(Effect.provide(gpuSerials.builtinRegistryLayer)),
    )
    expect(loaded.config.clusterName).toBe("lab")
    expect(loaded.config.receivers[0]?.config).toMatchObject({ workers: 4 })
    expect(loaded.config.processors[0]?.config).toMatchObject({ removalGraceMs: 10_000, store: "memory" })
    expect(loaded.exporters.map((exporter) => exporter.id)).toEqual(["stdout"])
    expect(loaded.origins["receivers.kube_exec.workers"]).toEqual({ source: "flag", key: "--workers" })
  })
})
