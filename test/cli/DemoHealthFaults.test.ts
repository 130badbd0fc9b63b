import { describe, expect, it } from "vitest"
import { gpuSerials, jsonLines } from "./GpuSerialsCli.ts"

describe("gpu-serials demo --fault-health", () => {
  it("turns GPUs degraded or failed and shows each change as a health event with the state before", () => {
    const run = gpuSerials(["demo", "--duration", "30s", "--fault-health", "1"], { timeoutMs: 60_000 })
    expect(run.status).toBe(0)
    const changes = jsonLines(run.stdout).filter((record) => record.event === "health")
    expect(changes.length).toBeGreaterThan(0)
    for (const change of changes) {
      const health = change.health as { readonly state: string; readonly reasons: ReadonlyArray<string> }
      expect(["ok", "degraded", "failed"]).toContain(health.state)
      expect(["ok", "degraded", "failed"]).toContain(change.previousHealthState)
    }
    expect(changes.some((change) => (change.health as { readonly state: string }).state !== "ok")).toBe(true)
    expect(run.stderr).toMatch(/ {2}events: added \d+, moved \d+, removed \d+, observed \d+, health [1-9]\d*\n/)
  }, 90_000)

  it("rejects a share outside 0 to 1 with exit code 2", () => {
    const run = gpuSerials(["demo", "--fault-health", "3"])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("--fault-health must be a share from 0 to 1, not 3")
  })
})
