import { assert, describe, it } from "@effect/vitest"
import { startSimulatedCluster } from "@gpu-serials/kube-sim"
import { KubeConfig } from "@kubernetes/client-node"
import { Effect } from "effect"
import { KubeApi, type ListedPage } from "../../../src/receiver/kube/KubeApi.ts"
import { quickCluster } from "./ReceiverHarness.ts"

const withApi = Effect.gen(function* () {
  const cluster = yield* Effect.acquireRelease(
    Effect.promise(() => startSimulatedCluster({ ...quickCluster, nodes: 5 })),
    (started) => Effect.promise(() => started.close()),
  )
  const kubeConfig = new KubeConfig()
  kubeConfig.loadFromFile(cluster.kubeconfigPath)
  const api = yield* KubeApi.make(kubeConfig, {
    qps: 200,
    burst: 200,
    requestTimeoutMs: 3_000,
    execHandshakeTimeoutMs: 3_000,
  })
  return { cluster, api }
})

const nameOf = (item: unknown): string => {
  const metadata = typeof item === "object" && item !== null && "metadata" in item ? item.metadata : undefined
  return typeof metadata === "object" && metadata !== null && "name" in metadata ? String(metadata.name) : ""
}

describe("KubeApi lists against the simulated cluster", () => {
  it.live("pages through every node with continue tokens and ends with none", () =>
    Effect.gen(function* () {
      const { cluster, api } = yield* withApi
      const first = yield* api.listNodes({ limit: 2 })
      assert.strictEqual(first.items.length, 2)
      assert.isDefined(first.continueToken)
      assert.notStrictEqual(first.resourceVersion, "")
      const names = first.items.map(nameOf)
      let token: string | undefined = first.continueToken
      while (token !== undefined) {
        const next: ListedPage = yield* api.listNodes({ limit: 2, continueToken: token })
        names.push(...next.items.map(nameOf))
        token = next.continueToken
      }
      assert.deepStrictEqual(new Set(names), new Set(cluster.nodeNames()))
      assert.strictEqual(names.length, cluster.nodeNames().length)
    }),
  )

  it.live("lists pods by label selector, and none for a selector nothing matches", () =>
    Effect.gen(function* () {
      const { cluster, api } = yield* withApi
      const pods = yield* api.listPods("gpu-operator", "app=nvidia-device-plugin-daemonset", { limit: 100 })
      assert.strictEqual(pods.items.length, cluster.nodeNames().length)
      assert.isUndefined(pods.continueToken)
      const none = yield* api.listPods("gpu-operator", "app=no-such-app", { limit: 100 })
      assert.deepStrictEqual(none.items, [])
    }),
  )

  it.live("a throttled list fails as throttled with its HTTP status", () =>
    Effect.gen(function* () {
      const { cluster, api } = yield* withApi
      cluster.faults.inject({ kind: "throttle", retryAfterSeconds: 0, match: { verb: "list", resource: "nodes" } })
      const error = yield* Effect.flip(api.listNodes({ limit: 10 }))
      assert.strictEqual(error.kind, "throttled")
      assert.strictEqual(error.status, 429)
      assert.strictEqual(error.operation, "list nodes")
    }),
  )
})
