import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { runFleetAccuracy } from "../../accuracy/FleetAccuracyRun.ts"
import { upToDateCompiledCli } from "../support/CompiledCli.ts"

const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url))

describe("accuracy of a fleet's hub against the simulated clusters' ledgers", () => {
  it("with boards swapped between 2 clusters under churn, the hub reports cross-cluster moves, none false or missed, none twice", async () => {
    const outcome = await runFleetAccuracy({
      clusters: 2,
      nodes: 8,
      seed: "fleet-accuracy-test",
      churnMs: 12_000,
      churn: { podRestartsPerMinute: 20, gpuSwapsPerMinute: 12, readinessFlapsPerMinute: 10 },
      crossClusterSwapsPerMinute: 30,
      faults: {},
      removalGraceMs: 4_000,
      resyncMs: 3_000,
      timeoutMs: 2_000,
      qps: 50,
      podTimings: { startMs: 100, readyMs: 200, terminationMs: 100 },
      cli: join(repositoryRoot, upToDateCompiledCli()),
      cwd: repositoryRoot,
      progress: () => undefined,
    })
    const { disagreements, ...figures } = outcome.report
    expect({ failures: outcome.failures, disagreements }).toEqual({ failures: [], disagreements: [] })
    expect(figures).toMatchObject({
      clusters: 2,
      missed_cross_cluster: 0,
      false_cross_cluster: 0,
      repeated_cross_cluster: 0,
    })
    expect(figures.cross_cluster_reported).toBeGreaterThan(0)
    expect(figures.cross_cluster_reported + figures.missed_cross_cluster + figures.unreportable_cross_cluster).toBe(
      figures.true_cross_cluster_moves,
    )
  }, 90_000)
})
