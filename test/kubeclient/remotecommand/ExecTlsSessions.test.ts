import { Writable } from "node:stream"
import { assert, describe, it } from "@effect/vitest"
import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { Deferred, Effect } from "effect"
import type { ClusterAccess } from "../../../src/kubeclient/clientcmd/ClusterAccess.ts"
import { KubeApi } from "../../../src/kubeclient/rest/KubeApi.ts"
import { quickCluster } from "../../receiver/kube/ReceiverHarness.ts"
import { accessOfKubeconfigFile } from "../../support/KubeconfigAccess.ts"

const apiOptions = { qps: 200, burst: 200, requestTimeoutMs: 3_000, execHandshakeTimeoutMs: 3_000 }

const startCluster = Effect.acquireRelease(
  Effect.promise(() => startSimulatedCluster({ ...quickCluster, nodes: 2 })),
  (cluster) => Effect.promise(() => cluster.close()),
)

const discard = () =>
  new Writable({
    write: (_chunk, _encoding, done) => done(),
  })

/** Runs `nvidia-smi -L` on the cluster's first node and waits for its status. */
const execOnce = (api: KubeApi["Service"], cluster: SimulatedCluster) =>
  Effect.scoped(
    Effect.gen(function* () {
      const node = cluster.nodeNames()[0] ?? ""
      const status = yield* Deferred.make<string>()
      yield* api.exec({
        namespace: cluster.namespace,
        pod: cluster.podOf(node) ?? "",
        container: cluster.container,
        argv: ["nvidia-smi", "-L"],
        stdout: discard(),
        stderr: discard(),
        onStatus: (received) => Deferred.doneUnsafe(status, Effect.succeed(received.status ?? "")),
      })
      assert.strictEqual(yield* Deferred.await(status), "Success")
    }),
  )

/** The API server's TLS handshakes during `effect`: all of them, and the resumed ones. */
const handshakesDuring = <A, E, R>(cluster: SimulatedCluster, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const before = cluster.stats()
    yield* effect
    const after = cluster.stats()
    return { all: after.tlsHandshakes - before.tlsHandshakes, resumed: after.tlsResumed - before.tlsResumed }
  })

describe("exec sessions over TLS", () => {
  it.live("the first exec makes a full handshake, the next ones resume its TLS session", () =>
    Effect.gen(function* () {
      const cluster = yield* startCluster
      const api = yield* KubeApi.make(accessOfKubeconfigFile(cluster.kubeconfigPath), apiOptions)
      assert.deepStrictEqual(yield* handshakesDuring(cluster, execOnce(api, cluster)), { all: 1, resumed: 0 })
      for (let exec = 0; exec < 5; exec++)
        assert.deepStrictEqual(yield* handshakesDuring(cluster, execOnce(api, cluster)), { all: 1, resumed: 1 })
    }),
  )

  it.live("an exec after a REST call upgrades the connection that call left idle: no handshake at all", () =>
    Effect.gen(function* () {
      const cluster = yield* startCluster
      const api = yield* KubeApi.make(accessOfKubeconfigFile(cluster.kubeconfigPath), apiOptions)
      const node = cluster.nodeNames()[0] ?? ""
      assert.deepStrictEqual(yield* handshakesDuring(cluster, api.patchNodeLabels(node, { "example.com/a": "1" })), {
        all: 1,
        resumed: 0,
      })
      assert.deepStrictEqual(yield* handshakesDuring(cluster, execOnce(api, cluster)), { all: 0, resumed: 0 })
      assert.deepStrictEqual(yield* handshakesDuring(cluster, api.patchNodeLabels(node, { "example.com/a": "2" })), {
        all: 1,
        resumed: 1,
      })
    }),
  )

  it.live("a changed CA is never resumed under: a full handshake with the new one, then resumed again", () =>
    Effect.gen(function* () {
      const cluster = yield* startCluster
      const other = yield* startCluster
      const kubeconfig = accessOfKubeconfigFile(cluster.kubeconfigPath)
      // The CA rotated in the kubeconfig: a bundle of the cluster's CA and another one.
      let ca: Buffer | undefined
      const access: ClusterAccess = {
        server: kubeconfig.server,
        applyTo: async (options) => {
          await kubeconfig.applyTo(options)
          if (ca !== undefined) options.ca = ca
        },
      }
      const api = yield* KubeApi.make(access, apiOptions)
      yield* execOnce(api, cluster)
      assert.deepStrictEqual(yield* handshakesDuring(cluster, execOnce(api, cluster)), { all: 1, resumed: 1 })
      ca = Buffer.from(`${cluster.certificateAuthority ?? ""}${other.certificateAuthority ?? ""}`)
      assert.deepStrictEqual(yield* handshakesDuring(cluster, execOnce(api, cluster)), { all: 1, resumed: 0 })
      assert.deepStrictEqual(yield* handshakesDuring(cluster, execOnce(api, cluster)), { all: 1, resumed: 1 })
    }),
  )
})
