import { Result } from "effect"
import { describe, expect, it } from "vitest"
import type { FleetConfig } from "../../src/processor/fleet/FleetConfig.ts"
import type { HubNatsConfig } from "../../src/receiver/nats/HubNatsConfig.ts"
import { problemsOf, resolve } from "./ResolveFixture.ts"

const hubFile = (receiver: string, processor: string, sections = "") =>
  [
    "cluster: { name: fleet }",
    "receivers:",
    "  nats: { url: nats://hub.example:4222, clusters: [east, west] }",
    "  kube_exec:",
    sections === "" ? "processors: { fleet:, inventory: }" : sections,
    "exporters: { stdout: }",
    `service: { pipelines: { gpus: { receivers: [${receiver}], processors: [${processor}], exporters: [stdout] } } }`,
    "",
  ].join("\n")

describe("a hub's pipeline in the config file", () => {
  it("pairs the nats receiver with the fleet processor, with their defaults", () => {
    const resolved = resolve({ file: hubFile("nats", "fleet") })
    if (Result.isFailure(resolved)) throw new Error(resolved.failure.format())
    const { receivers, processors } = resolved.success.config
    expect(receivers.map((receiver) => receiver.type)).toEqual(["nats"])
    expect(processors.map((processor) => processor.type)).toEqual(["fleet"])
    const receiver = receivers[0]?.config as HubNatsConfig
    expect(receiver.servers).toEqual(["nats://hub.example:4222"])
    expect(receiver.clusters).toEqual(["east", "west"])
    expect(receiver.stream).toBe("GPU_SERIALS_HUB")
    expect(receiver.clusterStream).toBe("GPU_SERIALS")
    expect(receiver.kvBucket).toBe("gpu_serials")
    const processor = processors[0]?.config as FleetConfig
    expect(processor.crossClusterWindowMs).toBe(30 * 24 * 3_600_000)
    expect(processor.staleAfterMs).toBe(5 * 60_000)
  })

  it("keeps a pipeline that names no receiver or processor a cluster's: kube_exec and inventory", () => {
    const resolved = resolve({ env: { CLUSTER_NAME: "east" } })
    if (Result.isFailure(resolved)) throw new Error(resolved.failure.format())
    expect(resolved.success.config.receivers.map((receiver) => receiver.type)).toEqual(["kube_exec"])
    expect(resolved.success.config.processors.map((processor) => processor.type)).toEqual(["inventory"])
  })

  it("refuses a receiver and a processor that pass different observations, naming the processors key", () => {
    expect(problemsOf({ file: hubFile("kube_exec", "fleet") })).toEqual([
      {
        key: "service.pipelines.gpus.processors",
        message:
          'processor "fleet" takes cluster observations and receiver "kube_exec" makes node observations; with receiver "kube_exec" use a processor of: inventory',
      },
    ])
    expect(problemsOf({ file: hubFile("nats", "inventory") })).toEqual([
      {
        key: "service.pipelines.gpus.processors",
        message:
          'processor "inventory" takes node observations and receiver "nats" makes cluster observations; with receiver "nats" use a processor of: fleet',
      },
    ])
  })

  it("names the key of each bad hub setting", () => {
    const sections = ["processors:", "  fleet: { crossClusterWindow: 0s, staleAfter: 1s }"].join("\n")
    const file = hubFile("nats", "fleet", sections).replace(
      "clusters: [east, west]",
      "clusters: [east, east, 'we.st'], stream: GPU_SERIALS, batchSize: 0",
    )
    const problems = problemsOf({ file })
    expect(problems.map((problem) => problem.key)).toEqual([
      "processors.fleet.crossClusterWindow",
      "processors.fleet.staleAfter",
      "receivers.nats.batchSize",
      "receivers.nats.clusters",
      "receivers.nats.stream",
    ])
    expect(problems.find((problem) => problem.key === "receivers.nats.clusters")?.message).toBe(
      "hub cluster \"we.st\" is not a JetStream domain (letters, digits, '_', '-')",
    )
  })

  it("requires the clusters of a hub, from the file or HUB_CLUSTERS", () => {
    const file = hubFile("nats", "fleet").replace(", clusters: [east, west]", "")
    expect(problemsOf({ file })).toEqual([
      { key: "receivers.nats.clusters", message: "hub clusters must name at least one cluster" },
    ])
    const fromEnv = resolve({ file, env: { HUB_CLUSTERS: "east,west" } })
    expect(Result.isSuccess(fromEnv) && fromEnv.success.config.receivers[0]?.config).toMatchObject({
      clusters: ["east", "west"],
    })
  })
})
