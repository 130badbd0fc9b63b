import { CoreV1Api, KubeConfig, makeInformer, type V1Node, type V1Pod } from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type SimulatedCluster, startSimulatedCluster } from "../src/SimulatedCluster.ts"
import { eventually } from "./Eventually.ts"

const ready = (pod: V1Pod) =>
  pod.status?.phase === "Running" &&
  pod.status.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true

describe("cluster churn", () => {
  let cluster: SimulatedCluster
  let kubeConfig: KubeConfig
  let core: CoreV1Api

  beforeAll(async () => {
    cluster = await startSimulatedCluster({
      nodes: 16,
      seed: "churn",
      execLatency: 0,
      podTimings: { startMs: 20, readyMs: 20, terminationMs: 20 },
    })
    kubeConfig = new KubeConfig()
    kubeConfig.loadFromFile(cluster.kubeconfigPath)
    core = kubeConfig.makeApiClient(CoreV1Api)
  })

  afterAll(async () => {
    await cluster.close()
  })

  it("adds a node whose pod goes Pending, then Running, then Ready; removing it collects its pod", async () => {
    const namespace = cluster.namespace
    const pods = makeInformer<V1Pod>(
      kubeConfig,
      `/api/v1/namespaces/${namespace}/pods`,
      () => core.listNamespacedPod({ namespace, labelSelector: cluster.labelSelector }),
      cluster.labelSelector,
    )
    const nodes = makeInformer<V1Node>(kubeConfig, "/api/v1/nodes", () => core.listNode())
    const phases: string[] = []
    const deletedPods: string[] = []
    const deletedNodes: string[] = []
    let joined = ""
    pods.on("add", (pod) => {
      if (pod.spec?.nodeName === joined) phases.push(pod.status?.phase ?? "")
    })
    pods.on("update", (pod) => {
      if (pod.spec?.nodeName === joined) phases.push(ready(pod) ? "Ready" : (pod.status?.phase ?? ""))
    })
    pods.on("delete", (pod) => deletedPods.push(pod.metadata?.name ?? ""))
    nodes.on("delete", (node) => deletedNodes.push(node.metadata?.name ?? ""))
    await pods.start()
    await nodes.start()
    try {
      joined = cluster.addNode("l40s")
      await eventually("the new node", () => nodes.get(joined) !== undefined)
      await eventually("the new pod to become ready", () => phases.includes("Ready"))
      expect(phases[0]).toBe("Pending")
      expect(phases).toContain("Running")
      const pod = cluster.podOf(joined) ?? ""
      cluster.removeNode(joined)
      await eventually("the node's deletion", () => deletedNodes.includes(joined))
      await eventually("its pod's deletion", () => deletedPods.includes(pod))
      expect(cluster.node(joined)).toBeUndefined()
    } finally {
      await pods.stop()
      await nodes.stop()
    }
  })

  it("restarts pods, joins and removes nodes and swaps GPUs at the configured rates", async () => {
    const namespace = cluster.namespace
    const initialNodes = new Set(cluster.nodeNames())
    const uuidsBefore = new Map(
      cluster.nodeNames().map((name) => [name, (cluster.node(name)?.gpus ?? []).map((gpu) => gpu.uuid).join()]),
    )
    const informer = makeInformer<V1Pod>(
      kubeConfig,
      `/api/v1/namespaces/${namespace}/pods`,
      () => core.listNamespacedPod({ namespace, labelSelector: cluster.labelSelector }),
      cluster.labelSelector,
    )
    let adds = 0
    let deletes = 0
    informer.on("add", () => adds++)
    informer.on("delete", () => deletes++)
    await informer.start()
    const initialAdds = adds
    cluster.churn.setRates({
      podRestartsPerMinute: 240,
      nodeJoinsPerMinute: 120,
      nodeLeavesPerMinute: 120,
      gpuSwapsPerMinute: 240,
      readinessFlapsPerMinute: 120,
    })
    try {
      try {
        await eventually(
          "every kind of churn",
          () => {
            const names = cluster.nodeNames()
            const joined = names.some((name) => !initialNodes.has(name))
            const left = [...initialNodes].some((name) => !names.includes(name))
            const swapped = names.some(
              (name) =>
                uuidsBefore.has(name) &&
                uuidsBefore.get(name) !== (cluster.node(name)?.gpus ?? []).map((gpu) => gpu.uuid).join(),
            )
            return joined && left && swapped && adds > initialAdds + 3 && deletes > 3
          },
          20_000,
        )
      } finally {
        cluster.churn.setRates({
          podRestartsPerMinute: 0,
          nodeJoinsPerMinute: 0,
          nodeLeavesPerMinute: 0,
          gpuSwapsPerMinute: 0,
          readinessFlapsPerMinute: 0,
        })
      }
      await eventually("every node to have a ready pod again", () =>
        cluster.nodeNames().every((name) => {
          const pod = informer.get(cluster.podOf(name) ?? "", namespace)
          return pod !== undefined && ready(pod)
        }),
      )
    } finally {
      await informer.stop()
    }
  })
})
