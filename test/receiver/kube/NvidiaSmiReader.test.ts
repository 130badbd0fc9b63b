import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { csvQueryArgv } from "../../../src/nvsmi/Command.ts"
import { eventually, reads, startHarness } from "./ReceiverHarness.ts"

const queriedFields = (argv: ReadonlyArray<string>): ReadonlyArray<string> =>
  (argv.find((argument) => argument.startsWith("--query-gpu=")) ?? "").slice("--query-gpu=".length).split(",")

describe("nvidia-smi reader: the health fields a driver accepts", () => {
  it.live("a driver without a health field has its group left out at once, then each reading is one exec", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        cluster: { nodes: 6, modelMix: { "h100-hgx": 1, "gb200-nvl72": 1 }, seed: "health-fields" },
        config: {
          resyncMs: 100,
          nvidiaSmi: { mode: "auto", maxOutputBytes: 8 * 1024 * 1024, path: "nvidia-smi", mlLibrary: "" },
        },
      })
      const csvNodes = () => [
        ...new Set(
          reads(harness)
            .filter((read) => read.reading.format === "csv")
            .map((read) => read.pod.name),
        ),
      ]
      yield* eventually("three CSV readings of every node read as CSV", () =>
        harness.cluster
          .nodeNames()
          .every((node) => reads(harness).filter((read) => read.node.name === node).length >= 3),
      )
      const byVersion = { before580: 0, from580: 0 }
      for (const pod of csvNodes()) {
        const readings = reads(harness).filter((read) => read.pod.name === pod)
        const execs = harness.execs.filter((exec) => exec.pod === pod)
        const driverVersion = harness.cluster.node(readings[0]?.node.name ?? "")?.driverVersion ?? ""
        assert.deepStrictEqual(execs[0]?.argv, csvQueryArgv)
        const settled = execs.at(-1)?.argv ?? []
        // The first reading took one run per refused field, every later reading one run with the settled query.
        const firstSettled = execs.findIndex((exec) => JSON.stringify(exec.argv) === JSON.stringify(settled))
        assert.isTrue(execs.slice(firstSettled).every((exec) => JSON.stringify(exec.argv) === JSON.stringify(settled)))
        assert.include([readings.length, readings.length + 1], execs.length - firstSettled)
        // The simulated drivers before 580 have the NVLink fabric fields but not its health summary.
        if (Number.parseInt(driverVersion, 10) < 580) {
          byVersion.before580++
          assert.strictEqual(firstSettled, 1)
          assert.notInclude(queriedFields(settled), "fabric.health.summary")
          assert.includeMembers([...queriedFields(settled)], ["fabric.state", "fabric.clusterUuid"])
        } else {
          byVersion.from580++
          assert.strictEqual(firstSettled, 0)
        }
        assert.isTrue(readings.every((read) => read.reading.gpus.every((gpu) => gpu.health?.recoveryAction === "none")))
      }
      assert.isAbove(byVersion.before580, 0)
    }),
  )

  it.live("forgets what the driver refused when the device-plugin pod is replaced", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        cluster: { nodes: 6, modelMix: { "h100-hgx": 1, "gb200-nvl72": 1 }, seed: "health-fields" },
        config: {
          resyncMs: 100,
          nvidiaSmi: { mode: "auto", maxOutputBytes: 8 * 1024 * 1024, path: "nvidia-smi", mlLibrary: "" },
        },
      })
      yield* eventually("every node read", () =>
        harness.cluster.nodeNames().every((node) => reads(harness).some((read) => read.node.name === node)),
      )
      const node = harness.cluster
        .nodeNames()
        .find(
          (name) =>
            Number.parseInt(harness.cluster.node(name)?.driverVersion ?? "", 10) < 580 &&
            reads(harness).some((read) => read.node.name === name && read.reading.format === "csv"),
        )
      assert.isDefined(node)
      const oldPod = harness.cluster.restartPod(node as string)
      yield* eventually("the new pod read", () =>
        reads(harness).some((read) => read.node.name === node && read.pod.name !== oldPod),
      )
      const newPod = reads(harness).find((read) => read.node.name === node && read.pod.name !== oldPod)?.pod.name
      const execs = harness.execs.filter((exec) => exec.pod === newPod)
      assert.deepStrictEqual(execs[0]?.argv, csvQueryArgv)
      assert.notInclude(queriedFields(execs[1]?.argv ?? []), "fabric.health.summary")
    }),
  )
})
