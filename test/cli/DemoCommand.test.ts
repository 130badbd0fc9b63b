import { describe, expect, it } from "vitest"
import { gpuSerials, jsonLines } from "./GpuSerialsCli.ts"

describe("gpu-serials demo", () => {
  it("runs the service against the simulated cluster, prints records, the broken node's error and a summary", () => {
    const run = gpuSerials(["demo", "--duration", "6s"])
    expect(run.stderr).toContain("simulated cluster at http://127.0.0.1:")
    expect(run.status).toBe(0)
    const records = jsonLines(run.stdout)
    expect(records.length).toBeGreaterThan(20)
    expect(records.every((record) => record.schema === "gpu-serials/v1" && record.cluster === "demo")).toBe(true)
    expect(records.filter((record) => record.product === "NVIDIA GB200").every((record) => record.chassis !== "")).toBe(
      true,
    )
    expect(run.stderr).toContain("demo summary after")
    expect(run.stderr).toMatch(/driver-not-loaded: 1 node/)
    expect(records.some((record) => record.machine === "na" && record.gpu === "")).toBe(true)
  }, 30_000)

  it("rejects a bad demo option with exit code 2", () => {
    const run = gpuSerials(["demo", "--nodes", "0", "--fault-rate", "2"])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("--nodes must be 1 to 10000, not 0")
    expect(run.stderr).toContain("--fault-rate must be a probability from 0 to 1, not 2")
  })
})
