import { assert, describe, it } from "@effect/vitest"
import { type SimulatedClusterOptions, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { Cause, Effect, Queue } from "effect"
import { preferredSliceVersion, resourceSliceOf } from "../../../src/kubeclient/resource/ResourceSlice.ts"
import { KubeApi } from "../../../src/kubeclient/rest/KubeApi.ts"
import { quickCluster } from "../../receiver/kube/ReceiverHarness.ts"
import { accessOfKubeconfigFile } from "../../support/KubeconfigAccess.ts"

const apiOptions = { qps: 200, burst: 200, requestTimeoutMs: 3_000, execHandshakeTimeoutMs: 3_000 }

const withApi = (options: SimulatedClusterOptions) =>
  Effect.gen(function* () {
    const cluster = yield* Effect.acquireRelease(
      Effect.promise(() => startSimulatedCluster({ ...quickCluster, nodes: 3, ...options })),
      (started) => Effect.promise(() => started.close()),
    )
    const api = yield* KubeApi.make(accessOfKubeconfigFile(cluster.kubeconfigPath), apiOptions)
    return { cluster, api }
  })

describe("ResourceSlices through the API client", () => {
  it.live("finds no resource.k8s.io on a cluster without it", () =>
    Effect.gen(function* () {
      const { api } = yield* withApi({})
      assert.deepStrictEqual(yield* api.apiGroupVersions("resource.k8s.io"), [])
    }).pipe(Effect.scoped),
  )

  it.live("reads a v1beta1-only server's slices, attributes under basic, one per node", () =>
    Effect.gen(function* () {
      const { cluster, api } = yield* withApi({ dra: true, draApiVersions: ["v1beta1"] })
      const version = preferredSliceVersion(yield* api.apiGroupVersions("resource.k8s.io"))
      assert.strictEqual(version, "v1beta1")
      const page = yield* api.listResourceSlices("v1beta1", "spec.driver=gpu.nvidia.com", { limit: 2 })
      const rest =
        page.continueToken === undefined
          ? []
          : (yield* api.listResourceSlices("v1beta1", "spec.driver=gpu.nvidia.com", {
              limit: 2,
              continueToken: page.continueToken,
            })).items
      const slices = [...page.items, ...rest].map(resourceSliceOf)
      assert.deepStrictEqual(slices.map((slice) => slice?.nodeName).sort(), [...cluster.nodeNames()])
      for (const slice of slices) {
        assert.strictEqual(slice?.driver, "gpu.nvidia.com")
        assert.isTrue((slice?.devices.length ?? 0) > 0)
        assert.isTrue(slice?.devices.every((device) => device.attributes.uuid?.string !== undefined))
      }
    }).pipe(Effect.scoped),
  )

  it.live("watches slices with the field selector from a list's resourceVersion", () =>
    Effect.gen(function* () {
      const { cluster, api } = yield* withApi({ dra: true, draApiVersions: ["v1", "v1beta2"] })
      assert.strictEqual(preferredSliceVersion(yield* api.apiGroupVersions("resource.k8s.io")), "v1")
      const listed = yield* api.listResourceSlices("v1", "spec.driver=gpu.nvidia.com", { limit: 500 })
      const events = yield* api.watch({
        path: "/apis/resource.k8s.io/v1/resourceslices",
        fieldSelector: "spec.driver=gpu.nvidia.com",
        resourceVersion: listed.resourceVersion,
        timeoutSeconds: 5,
      })
      const [first = "", second = ""] = cluster.nodeNames()
      cluster.swapGpus(first, second, { restartPods: false })
      const event = yield* Queue.take(events).pipe(Effect.catchIf(Cause.isDone, () => Effect.die("watch ended")))
      assert.strictEqual(event.type, "MODIFIED")
      assert.strictEqual(resourceSliceOf(event.object)?.driver, "gpu.nvidia.com")
    }).pipe(Effect.scoped),
  )
})
