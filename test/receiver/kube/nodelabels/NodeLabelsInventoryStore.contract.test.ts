import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { Effect, Result } from "effect"
import { defaultInformerOptions } from "../../../../src/kubeclient/cache/ResourceInformer.ts"
import { KubeApi } from "../../../../src/kubeclient/rest/KubeApi.ts"
import { ServiceMetrics } from "../../../../src/metrics/ServiceMetrics.ts"
import { InventoryFeed } from "../../../../src/pipeline/InventoryFeed.ts"
import { clusterNodeOf, nodeRefOf } from "../../../../src/receiver/kube/ClusterNode.ts"
import { factory as kubeExecFactory } from "../../../../src/receiver/kube/KubeExecFactory.ts"
import * as NodeInformer from "../../../../src/receiver/kube/NodeInformer.ts"
import * as NodeLabeller from "../../../../src/receiver/kube/nodelabels/NodeLabeller.ts"
import * as NodeLabelsInventoryStore from "../../../../src/receiver/kube/nodelabels/NodeLabelsInventoryStore.ts"
import { type ClusterNodes, inventoryStoreContract } from "../../../pipeline/InventoryStoreContract.ts"
import { accessOfKubeconfigFile } from "../../../support/KubeconfigAccess.ts"
import { recordingMetrics } from "../../../support/RecordingMetrics.ts"

const prefix = "gpu-serials.dev"

/** The config of the `kube_exec` receiver that keeps the store, as its own settings build it: labels on. */
const receiverConfig = (cluster: SimulatedCluster) => {
  const config = kubeExecFactory.validate({
    kubeconfig: cluster.kubeconfigPath,
    namespace: cluster.namespace,
    nodeLabels: { enabled: true, prefix },
  })
  if (Result.isFailure(config)) throw new Error(`kube_exec config refused: ${JSON.stringify(config.failure)}`)
  return config.success
}

/** The API client of one run, as the receiver has it. */
const apiOf = (cluster: SimulatedCluster) =>
  KubeApi.make(accessOfKubeconfigFile(cluster.kubeconfigPath), {
    qps: 200,
    burst: 200,
    requestTimeoutMs: 3_000,
    execHandshakeTimeoutMs: 3_000,
  })

/** The node labeller of one run, wired to the node informer as the receiver wires it, once the nodes listed. */
const labelling = (cluster: SimulatedCluster, feed: InventoryFeed["Service"]) =>
  Effect.gen(function* () {
    const api = yield* apiOf(cluster)
    const metrics = yield* Effect.gen(function* () {
      return yield* ServiceMetrics
    }).pipe(Effect.provide(recordingMetrics().layer))
    yield* Effect.gen(function* () {
      const labeller = yield* NodeLabeller.make({
        prefix,
        workers: 2,
        retryBackoff: { baseMs: 50, maxMs: 400, jitter: 0.5 },
        shutdownTimeoutMs: 5_000,
      })
      const nodes = yield* NodeInformer.start(
        api,
        { ...defaultInformerOptions, restartBackoff: { baseMs: 50, maxMs: 400, jitter: 0.5 } },
        labeller.nodeChanged,
        prefix,
      )
      // Only the labeller here: no pods wait to be read.
      yield* labeller.start(nodes, () => 0)
      // A run that stops before the nodes listed writes nothing, by design; the scenarios' runs are short.
      yield* nodes.synced
    }).pipe(
      Effect.provideService(KubeApi, api),
      Effect.provideService(InventoryFeed, feed),
      Effect.provideService(ServiceMetrics, metrics),
    )
  })

/** The first three nodes of the cluster, as the receiver names them in observations. */
const nodesOf = (cluster: SimulatedCluster) =>
  Effect.gen(function* () {
    const api = yield* apiOf(cluster)
    const page = yield* Effect.orDie(api.listNodes({ limit: 500 }))
    const nodes = page.items.flatMap((item) => {
      const node = clusterNodeOf(item)
      return node === undefined ? [] : [nodeRefOf(node.key, node)]
    })
    const [first, second, third] = nodes.sort((a, b) => a.name.localeCompare(b.name))
    if (first === undefined || second === undefined || third === undefined) {
      return yield* Effect.die(new Error(`the simulated cluster has ${nodes.length} nodes`))
    }
    return [first, second, third] as ClusterNodes
  })

inventoryStoreContract({
  kind: "node-labels",
  storeSetting: "node-labels",
  backendOfClusters: "each with its own API server",
  // A deleted node takes its labels with it; labels keep UUID, index, serial and chassis, not product or driver.
  capabilities: { keepsDeletedNodes: false, keepsReadingFacts: false, keepsHealth: false },
  backend: (clusters) =>
    Effect.gen(function* () {
      const simulated = new Map<string, SimulatedCluster>()
      for (const name of clusters) {
        const cluster = yield* Effect.acquireRelease(
          Effect.promise(() =>
            startSimulatedCluster({
              nodes: 3,
              modelMix: { "h100-hgx": 1 },
              seed: name,
              execLatency: 5,
              podTimings: { startMs: 20, readyMs: 20, terminationMs: 20 },
            }),
          ),
          (started) => Effect.promise(() => started.close()),
        )
        simulated.set(name, cluster)
      }
      const clusterOf = (name: string) => {
        const cluster = simulated.get(name)
        if (cluster === undefined) throw new Error(`no simulated cluster ${name}`)
        return cluster
      }
      return {
        open: (name) =>
          NodeLabelsInventoryStore.storeFactory.create(receiverConfig(clusterOf(name)), {
            clusterName: name,
            id: "node-labels",
          }),
        nodes: (name) => Effect.scoped(nodesOf(clusterOf(name))),
        keep: (name, feed) => labelling(clusterOf(name), feed),
        deleteNode: (name, node) => Effect.sync(() => clusterOf(name).removeNode(node)),
      }
    }),
})
