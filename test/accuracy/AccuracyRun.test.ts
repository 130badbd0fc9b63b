import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { runAccuracy } from "../../accuracy/AccuracyRun.ts"
import { upToDateCompiledCli } from "../support/CompiledCli.ts"

const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url))

/** What the run must never show; the other disagreements are measured by `npm run accuracy`, not asserted. */
const forbidden: ReadonlyArray<string> = [
  "false-moved",
  "missed-removed",
  "duplicate-added",
  "wrong-location-at-end",
  "false-health",
  "missed-health",
  "wrong-health-at-end",
]

describe("accuracy against the simulated cluster's ground truth", () => {
  it.each([
    ["device-plugin pods", false],
    ["NVIDIA's DRA driver (ResourceSlices, kubelet-plugin pods, DISCOVERY=dra)", true],
  ])(
    "with %s: under churn, faults, health faults and a restart, reports no false move or health, misses no removal or health change, repeats no added, and ends with every GPU where it is in its state",
    async (_, dra) => {
      const outcome = await runAccuracy({
        dra,
        nodes: 24,
        seed: "accuracy-test",
        churnMs: 16_000,
        churn: {
          podRestartsPerMinute: 30,
          nodeJoinsPerMinute: 8,
          nodeLeavesPerMinute: 8,
          gpuSwapsPerMinute: 24,
          readinessFlapsPerMinute: 20,
        },
        faults: {
          serverError: 0.02,
          throttle: 0.02,
          watchDropPerSecond: 0.02,
          execHang: 0.01,
          execNonZeroExit: 0.01,
          execTruncated: 0.02,
          execGarbage: 0.02,
          driverFailuresPerMinute: 6,
          driverFailureSeconds: 5,
          healthFaultsPerGpuMinute: 0.4,
        },
        stores: ["memory", "nats", "node-labels"],
        removalGraceMs: 6_000,
        resyncMs: 3_000,
        timeoutMs: 2_000,
        qps: 50,
        postgresUrl: "postgres://postgres@127.0.0.1:5432/test",
        podTimings: { startMs: 100, readyMs: 200, terminationMs: 100 },
        cli: join(repositoryRoot, upToDateCompiledCli()),
        cwd: repositoryRoot,
        progress: () => undefined,
      })
      expect(outcome.skipped).toEqual([])
      expect(outcome.scenarios.map((scenario) => scenario.store)).toEqual(["memory", "nats", "node-labels"])
      for (const { store, failure, runs, report } of outcome.scenarios) {
        const { disagreements, ...figures } = report
        const shown = { store, failure, disagreements: disagreements.filter((found) => forbidden.includes(found.kind)) }
        expect(shown).toEqual({ store, failure: undefined, disagreements: [] })
        expect(runs).toBe(2)
        expect(figures).toMatchObject({
          false_moved: 0,
          missed_removed: 0,
          duplicate_added: 0,
          wrong_location_at_end: 0,
          false_health: 0,
          missed_health: 0,
          wrong_health_at_end: 0,
        })
        expect(figures.true_health_changes).toBeGreaterThan(0)
        expect(figures.health_reported + figures.unreportable_health).toBe(figures.true_health_changes)
        expect(figures.gpus).toBeGreaterThan(0)
        expect(figures.gpus_at_true_location).toBe(figures.gpus)
        expect(figures.converged_s).not.toBeNull()
      }
    },
    120_000,
  )
})
