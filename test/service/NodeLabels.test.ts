import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { afterEach, describe, expect, it } from "vitest"
import type { ServiceConfig } from "../../src/config/ServiceConfig.ts"
import { defaultNodeLabellerTuning } from "../../src/receiver/kube/nodelabels/NodeLabeller.ts"
import { eventsOf, eventually, type RunningService, serviceConfig, startService } from "./ServiceHarness.ts"

const mix = { "gb200-nvl72": 1, "h100-hgx": 1, t4: 1 } as const

let cluster: SimulatedCluster | undefined
let service: RunningService | undefined

afterEach(async () => {
  await service?.stop()
  await cluster?.close()
  service = undefined
  cluster = undefined
})

/** The service's config with node labels on (the default), as flags would give it. */
const labellingConfig = (sim: SimulatedCluster, flags: ReadonlyArray<string> = []): ServiceConfig =>
  serviceConfig(sim, flags, { labels: true })

const run = promisify(execFile)

/**
 * `kubectl get nodes -L <prefix>/gpu-0,<prefix>/chassis` against the simulated cluster, as a user runs it
 * (asynchronously: the simulated API server answers from this process).
 */
const kubectlNodeColumns = async (sim: SimulatedCluster): Promise<ReadonlyArray<ReadonlyArray<string>>> => {
  const { stdout } = await run(
    "kubectl",
    ["--kubeconfig", sim.kubeconfigPath, "get", "nodes", "-L", "gpu-serials.dev/gpu-0,gpu-serials.dev/chassis"],
    { encoding: "utf8", timeout: 20_000 },
  )
  return stdout
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
}

const allGpus = (sim: SimulatedCluster): number =>
  sim.nodeNames().reduce((count, name) => count + (sim.node(name)?.gpus.length ?? 0), 0)

/** Whether kubectl shows every node's GPU 0 serial. */
const labelledForKubectl = async (sim: SimulatedCluster): Promise<boolean> => {
  const rows = await kubectlNodeColumns(sim)
  return sim.nodeNames().every((name) => {
    const serial = sim.node(name)?.gpus[0]?.serial
    return serial !== undefined && rows.some((columns) => columns[0] === name && columns.includes(serial))
  })
}

/** Starts the service again on the `node-labels` store; it reads every GPU again and announces none as added. */
const restartOnTheLabels = async (sim: SimulatedCluster): Promise<RunningService> => {
  service = await startService(labellingConfig(sim, ["--inventory-store", "node-labels"]))
  const second = service
  await eventually(second, "every GPU is read again", () => eventsOf(second.events, "observed").length >= allGpus(sim))
  expect(eventsOf(second.events, "added")).toEqual([])
  return second
}

describe("node labels written by the service", () => {
  it("shows each node's serials to kubectl, and a restart reading them back announces nothing as added", async () => {
    cluster = await startSimulatedCluster({ nodes: 3, modelMix: mix, seed: "node-labels", execLatency: 10 })
    const sim = cluster
    service = await startService(labellingConfig(sim))
    const first = service
    await eventually(first, "every GPU is added", () => eventsOf(first.events, "added").length >= allGpus(sim))
    let shown = false
    for (let attempt = 0; attempt < 40 && !shown; attempt++) {
      shown = await labelledForKubectl(sim)
      if (!shown) await new Promise((resolve) => setTimeout(resolve, 250))
    }
    expect(shown).toBe(true)

    const rows = await kubectlNodeColumns(sim)
    expect(rows[0]).toEqual(["NAME", "STATUS", "ROLES", "AGE", "VERSION", "GPU-0", "CHASSIS"])
    const gb200 = sim.nodeNames().find((name) => sim.node(name)?.gpus[0]?.chassisSerial !== undefined)
    const chassis = gb200 === undefined ? undefined : sim.node(gb200)?.gpus[0]?.chassisSerial
    expect(chassis).toBeDefined()
    expect(rows.find((columns) => columns[0] === gb200)?.at(-1)).toBe(chassis)

    await first.stop()
    const second = await restartOnTheLabels(sim)
    expect(second.logs.some((line) => line.msg === "inventory loaded" && line.store === "node-labels")).toBe(true)
  })
})

describe("node labels at shutdown", () => {
  it("writes the labels still waiting at SIGTERM, so a restart reading them back announces nothing as added", async () => {
    cluster = await startSimulatedCluster({ nodes: 3, modelMix: mix, seed: "labels-at-shutdown", execLatency: 10 })
    const sim = cluster
    // Every patch fails until the service stops, and a failed node waits far longer than the test to retry.
    sim.faults.inject({ kind: "server-error", status: 503, match: { verb: "patch", resource: "nodes" }, times: 1_000 })
    service = await startService(labellingConfig(sim), {
      nodeLabeller: { ...defaultNodeLabellerTuning, retryBackoff: { baseMs: 600_000, maxMs: 600_000, jitter: 0 } },
    })
    const first = service
    await eventually(first, "every GPU is added", () => eventsOf(first.events, "added").length >= allGpus(sim))
    const failedNodes = () =>
      new Set(
        first.logs
          .filter((line) => line.msg === "node labels not written, retrying with backoff")
          .map((line) => line.node),
      )
    await eventually(first, "every node's patch failed", () => failedNodes().size === sim.nodeNames().length)
    expect(await labelledForKubectl(sim)).toBe(false)

    const stopped = first.stop()
    // Before any request of the shutdown reaches the API server, which answers on this thread.
    sim.faults.clear()
    await stopped
    expect(await labelledForKubectl(sim)).toBe(true)
    expect(first.logs.filter((line) => line.msg === "node labels not written at shutdown")).toEqual([])

    await restartOnTheLabels(sim)
  })
})
