import { assert, describe, it } from "@effect/vitest"
import { requestApi, type SimulatedCluster } from "@gpu-serials/kube-sim"
import { Effect } from "effect"
import { csvQueryArgv } from "../../../src/nvsmi/Command.ts"
import { eventually, type Harness, type HarnessOptions, reads, startHarness } from "./ReceiverHarness.ts"

const queriedFields = (argv: ReadonlyArray<string>): ReadonlyArray<string> =>
  (argv.find((argument) => argument.startsWith("--query-gpu=")) ?? "").slice("--query-gpu=".length).split(",")

const sameArgv = (left: ReadonlyArray<string> | undefined, right: ReadonlyArray<string> | undefined) =>
  JSON.stringify(left) === JSON.stringify(right)

/** H100 and GB200 nodes on the simulated 535 to 590 drivers: those before 570 are read as XML. */
const mixedDrivers = (before?: HarnessOptions["before"]): HarnessOptions => ({
  cluster: { nodes: 6, modelMix: { "h100-hgx": 1, "gb200-nvl72": 1 }, seed: "health-fields" },
  config: {
    resyncMs: 100,
    nvidiaSmi: { mode: "auto", maxOutputBytes: 8 * 1024 * 1024, path: "nvidia-smi", mlLibrary: "" },
  },
  ...(before === undefined ? {} : { before }),
})

/** Removes GPU Feature Discovery's driver-branch label, so the service knows nothing of a node's driver. */
const unlabelDriverBranch = async (cluster: SimulatedCluster): Promise<void> => {
  for (const name of cluster.nodeNames()) {
    const response = await requestApi(cluster, `/api/v1/nodes/${name}`, {
      method: "PATCH",
      headers: { "content-type": "application/merge-patch+json" },
      body: JSON.stringify({ metadata: { labels: { "nvidia.com/cuda.driver.major": null } } }),
    })
    if (response.status !== 200) throw new Error(`unlabelling node ${name}: ${response.status}`)
  }
}

const driverBranchOf = (harness: Harness, node: string): number =>
  Number.parseInt(harness.cluster.node(node)?.driverVersion ?? "", 10)

/** The nodes read as CSV, by driver: the simulated drivers before 580 have the fabric fields but no health summary. */
const csvNodes = (harness: Harness) => {
  const nodes = [
    ...new Set(
      reads(harness)
        .filter((read) => read.reading.format === "csv")
        .map((read) => read.node.name),
    ),
  ]
  return {
    withoutSummary: nodes.filter((node) => driverBranchOf(harness, node) < 580),
    withSummary: nodes.filter((node) => driverBranchOf(harness, node) >= 580),
  }
}

const threeReadingsOfEveryNode = (harness: Harness) =>
  eventually("three readings of every node", () =>
    harness.cluster.nodeNames().every((node) => reads(harness).filter((read) => read.node.name === node).length >= 3),
  )

/** Every reading of the node after its first run took one exec, all with one query; returns the execs. */
const assertOneExecPerReadingFrom = (harness: Harness, node: string, firstSettled: number) => {
  const pods = new Set(
    reads(harness)
      .filter((read) => read.node.name === node)
      .map((read) => read.pod.name),
  )
  const readings = reads(harness).filter((read) => read.node.name === node)
  const execs = harness.execs.filter((exec) => pods.has(exec.pod))
  const settled = execs.at(-1)?.argv
  assert.strictEqual(
    execs.findIndex((exec) => sameArgv(exec.argv, settled)),
    firstSettled,
  )
  assert.isTrue(execs.slice(firstSettled).every((exec) => sameArgv(exec.argv, settled)))
  // One exec per reading from the first reading's last run on; a next one may be under way.
  assert.include([readings.length, readings.length + 1], execs.length - firstSettled)
  assert.isTrue(readings.every((read) => read.reading.format === "csv"))
  assert.isTrue(readings.every((read) => read.reading.gpus.every((gpu) => gpu.health?.recoveryAction === "none")))
  return execs
}

describe("nvidia-smi reader: the health fields a driver accepts", () => {
  it.live(
    "a node labelled with a driver branch before 580 is asked without the fabric summary from its first run",
    () =>
      Effect.gen(function* () {
        const harness = yield* startHarness(mixedDrivers())
        yield* threeReadingsOfEveryNode(harness)
        const { withoutSummary, withSummary } = csvNodes(harness)
        assert.isAbove(withoutSummary.length, 0)
        for (const node of withoutSummary) {
          const execs = assertOneExecPerReadingFrom(harness, node, 0)
          assert.notInclude(queriedFields(execs[0]?.argv ?? []), "fabric.health.summary")
          assert.includeMembers([...queriedFields(execs[0]?.argv ?? [])], ["fabric.state", "fabric.clusterUuid"])
        }
        for (const node of withSummary) {
          const execs = assertOneExecPerReadingFrom(harness, node, 0)
          assert.deepStrictEqual(execs[0]?.argv, csvQueryArgv)
        }
      }),
  )

  it.live("a driver that refuses a health field has its group left out at once, then each reading is one exec", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness(mixedDrivers(unlabelDriverBranch))
      yield* threeReadingsOfEveryNode(harness)
      const { withoutSummary, withSummary } = csvNodes(harness)
      assert.isAbove(withoutSummary.length, 0)
      for (const node of withoutSummary) {
        const execs = assertOneExecPerReadingFrom(harness, node, 1)
        assert.deepStrictEqual(execs[0]?.argv, csvQueryArgv)
        const settled = queriedFields(execs[1]?.argv ?? [])
        // What the second run left out is the refused field's group in its newer spelling, nothing else.
        assert.deepStrictEqual(
          queriedFields(csvQueryArgv).filter((field) => !settled.includes(field)),
          ["fabric.health.summary"],
        )
      }
      for (const node of withSummary) {
        assert.deepStrictEqual(assertOneExecPerReadingFrom(harness, node, 0)[0]?.argv, csvQueryArgv)
      }
    }),
  )

  it.live("forgets what the driver refused when the device-plugin pod is replaced", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness(mixedDrivers(unlabelDriverBranch))
      yield* eventually("every node read", () =>
        harness.cluster.nodeNames().every((node) => reads(harness).some((read) => read.node.name === node)),
      )
      const node = csvNodes(harness).withoutSummary[0]
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
