import { describe, expect, it } from "vitest"
import { factory as kubeExecFactory } from "../../src/receiver/kube/KubeExecFactory.ts"
import { builtinComponents } from "../../src/service/BuiltinComponents.ts"
import { storeProblem } from "../../src/service/InventoryStoreHost.ts"

const stores = builtinComponents.stores
const receiver = (enabled: boolean) => ({
  id: "kube_exec",
  type: "kube_exec",
  config: { ...kubeExecFactory.defaultConfig, nodeLabels: { ...kubeExecFactory.defaultConfig.nodeLabels, enabled } },
})

describe("inventory store names", () => {
  it("accepts memory alone, and node-labels kept by a kube_exec receiver that writes labels", () => {
    expect(storeProblem("memory", stores, [])).toBeUndefined()
    expect(storeProblem("node-labels", stores, [], [receiver(true)])).toBeUndefined()
  })

  it("refuses node-labels while the receiver writes no labels, or without a kube_exec receiver", () => {
    expect(storeProblem("node-labels", stores, [], [receiver(false)])).toBe(
      'inventory store "node-labels" is written by the node labeller: it needs node labels enabled (LABELS_ENABLED)',
    )
    expect(storeProblem("node-labels", stores, [], [])).toBe(
      'inventory store "node-labels" is kept by a kube_exec receiver, and the pipeline has none',
    )
  })

  it("names an exporter keeping a store by its id, and nothing else", () => {
    expect(storeProblem("nats/archive", stores, [{ id: "nats/archive", type: "nats" }])).toBeUndefined()
    expect(storeProblem("stdout", stores, [{ id: "stdout", type: "stdout" }])).toBe(
      'inventory store "stdout" is neither memory, node-labels nor an exporter of the pipeline that keeps a store (types: nats, postgres)',
    )
  })
})
