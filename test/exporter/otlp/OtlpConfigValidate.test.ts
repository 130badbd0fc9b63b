import { describe, expect, it } from "vitest"
import { gpuSerials } from "../../cli/GpuSerialsCli.ts"

describe("gpu-serials config validate with the otlp exporter", () => {
  it("accepts EXPORTER_TYPE=stdout,otlp with the standard OTLP variables", () => {
    const run = gpuSerials(["config", "validate"], {
      env: {
        CLUSTER_NAME: "prod-eu",
        EXPORTER_TYPE: "stdout,otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel-collector:4318",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=prod",
      },
    })
    expect(run.stderr).toBe("")
    expect(run.status).toBe(0)
  })

  it("names the variable of an invalid OTLP endpoint", () => {
    const run = gpuSerials(["config", "validate"], {
      env: {
        CLUSTER_NAME: "prod-eu",
        EXPORTER_TYPE: "stdout,otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT: "otel-collector:4318",
      },
    })
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("OTEL_EXPORTER_OTLP_ENDPOINT: OTLP endpoint must be an http:// or https:// URL")
  })
})
