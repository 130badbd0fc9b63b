import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { startSimulatedCluster } from "@gpu-serials/kube-sim"
import { Cause, Effect, Queue } from "effect"
import { loadClusterAccess } from "../../../src/kubeclient/clientcmd/KubeconfigLoader.ts"
import { KubeApi, type ListedPage, type WatchEvent, type WatchEvents } from "../../../src/kubeclient/rest/KubeApi.ts"
import { KubeApiError } from "../../../src/kubeclient/rest/KubeApiError.ts"
import { quickCluster } from "../../receiver/kube/ReceiverHarness.ts"
import { accessOfKubeconfig, accessOfKubeconfigFile } from "../../support/KubeconfigAccess.ts"

const apiOptions = { qps: 200, burst: 200, requestTimeoutMs: 3_000, execHandshakeTimeoutMs: 3_000 }

const withApi = Effect.gen(function* () {
  const cluster = yield* Effect.acquireRelease(
    Effect.promise(() => startSimulatedCluster({ ...quickCluster, nodes: 5 })),
    (started) => Effect.promise(() => started.close()),
  )
  const api = yield* KubeApi.make(accessOfKubeconfigFile(cluster.kubeconfigPath), apiOptions)
  return { cluster, api }
})

/** Events taken until the watch ends or breaks, and how it did. */
const drain = (events: WatchEvents) =>
  Effect.gen(function* () {
    const taken: Array<WatchEvent> = []
    while (true) {
      const next = yield* Effect.result(Queue.take(events))
      if (next._tag === "Failure") {
        return { taken, end: next.failure }
      }
      taken.push(next.success)
    }
  })

const brokeWith = (end: KubeApiError | Cause.Done): KubeApiError => {
  assert.instanceOf(end, KubeApiError)
  return end as KubeApiError
}

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

  it.live("a continue token older than the kept history fails the page as gone (410)", () =>
    Effect.gen(function* () {
      const { cluster, api } = yield* withApi
      const first = yield* api.listNodes({ limit: 2 })
      cluster.addNode()
      cluster.compactHistory()
      const error = yield* Effect.flip(api.listNodes({ limit: 2, continueToken: first.continueToken ?? "" }))
      assert.strictEqual(error.kind, "gone")
      assert.strictEqual(error.status, 410)
      assert.include(error.detail, "continue parameter is too old")
    }),
  )

  it.live("sends the kubeconfig's bearer token: a wrong one is refused (401)", () =>
    Effect.gen(function* () {
      const { cluster } = yield* withApi
      const access = accessOfKubeconfig(
        readFileSync(cluster.kubeconfigPath, "utf8").replace(`token: ${cluster.token}`, "token: not-the-token"),
      )
      const api = yield* KubeApi.make(access, apiOptions)
      const error = yield* Effect.flip(api.listNodes({ limit: 10 }))
      assert.strictEqual(error.kind, "rejected")
      assert.strictEqual(error.status, 401)
      assert.notInclude(error.message, "not-the-token")
    }),
  )

  it.live("runs a kubeconfig's exec credential plugin, through client-node, for its token", () =>
    Effect.gen(function* () {
      const { cluster } = yield* withApi
      const directory = mkdtempSync(join(tmpdir(), "gpu-serials-exec-plugin-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(directory, { recursive: true, force: true })))
      const plugin = join(directory, "credential-plugin.sh")
      const credential = {
        apiVersion: "client.authentication.k8s.io/v1",
        kind: "ExecCredential",
        status: { token: cluster.token },
      }
      writeFileSync(plugin, `#!/bin/sh\necho '${JSON.stringify(credential)}'\n`, { mode: 0o700 })
      const kubeconfig = join(directory, "config")
      writeFileSync(
        kubeconfig,
        readFileSync(cluster.kubeconfigPath, "utf8").replace(
          `token: ${cluster.token}`,
          `exec: {apiVersion: client.authentication.k8s.io/v1, command: ${plugin}, interactiveMode: Never}`,
        ),
      )
      const loaded = yield* loadClusterAccess(kubeconfig)
      assert.strictEqual(loaded.origin, kubeconfig)
      const api = yield* KubeApi.make(loaded.access, apiOptions)
      const nodes = yield* api.listNodes({ limit: 100 })
      assert.strictEqual(nodes.items.length, 5)
    }),
  )

  it.live("patches node labels and answers the node's new resourceVersion", () =>
    Effect.gen(function* () {
      const { cluster, api } = yield* withApi
      const node = cluster.nodeNames()[0] ?? ""
      const before = yield* api.listNodes({ limit: 100 })
      const version = yield* api.patchNodeLabels(node, { "example.com/gpu-0": "serial-1" })
      assert.notStrictEqual(version, "")
      assert.isAbove(Number(version), Number(before.resourceVersion))
      const after = yield* api.listNodes({ limit: 100 })
      const patched = after.items.find((item) => nameOf(item) === node) as {
        metadata: { labels: Record<string, string> }
      }
      assert.strictEqual(patched.metadata.labels["example.com/gpu-0"], "serial-1")
    }),
  )
})

describe("KubeApi watches against the simulated cluster", () => {
  it.live("streams changes and bookmarks, and ends normally when the server's timeout passes", () =>
    Effect.gen(function* () {
      const { cluster, api } = yield* withApi
      const listed = yield* api.listNodes({ limit: 100 })
      const { taken, end } = yield* Effect.scoped(
        Effect.gen(function* () {
          const events = yield* api.watch({
            path: "/api/v1/nodes",
            resourceVersion: listed.resourceVersion,
            timeoutSeconds: 1,
          })
          const added = cluster.addNode()
          const drained = yield* drain(events)
          assert.include(
            drained.taken.filter((event) => event.type === "ADDED").map((event) => nameOf(event.object)),
            added,
          )
          return drained
        }),
      )
      assert.isTrue(Cause.isDone(end))
      assert.isTrue(taken.some((event) => event.type === "BOOKMARK"))
    }),
  )

  it.live("a resourceVersion older than the kept history is an ERROR event carrying 410", () =>
    Effect.gen(function* () {
      const { cluster, api } = yield* withApi
      const listed = yield* api.listNodes({ limit: 100 })
      cluster.addNode()
      cluster.compactHistory()
      const { taken } = yield* Effect.scoped(
        api
          .watch({ path: "/api/v1/nodes", resourceVersion: listed.resourceVersion, timeoutSeconds: 5 })
          .pipe(Effect.flatMap(drain)),
      )
      const error = taken.find((event) => event.type === "ERROR")
      assert.isDefined(error)
      assert.strictEqual((error?.object as { code: number } | undefined)?.code, 410)
    }),
  )

  it.live("a dropped connection breaks the watch as a connection failure", () =>
    Effect.gen(function* () {
      const { cluster, api } = yield* withApi
      const listed = yield* api.listPods("gpu-operator", "app=nvidia-device-plugin-daemonset", { limit: 100 })
      const { end } = yield* Effect.scoped(
        Effect.gen(function* () {
          const events = yield* api.watch({
            path: "/api/v1/namespaces/gpu-operator/pods",
            labelSelector: "app=nvidia-device-plugin-daemonset",
            resourceVersion: listed.resourceVersion,
            timeoutSeconds: 60,
          })
          while (cluster.faults.dropWatches("pods") === 0) {
            yield* Effect.sleep("10 millis")
          }
          return yield* drain(events)
        }),
      )
      assert.strictEqual(brokeWith(end).kind, "connection")
      assert.strictEqual(brokeWith(end).operation, "watch /api/v1/namespaces/gpu-operator/pods")
    }),
  )

  it.live("a refused watch breaks with the status and the Status message", () =>
    Effect.gen(function* () {
      const { cluster, api } = yield* withApi
      cluster.access.deny({ verb: "watch", resource: "nodes" })
      const { taken, end } = yield* Effect.scoped(
        api.watch({ path: "/api/v1/nodes", resourceVersion: "", timeoutSeconds: 5 }).pipe(Effect.flatMap(drain)),
      )
      assert.deepStrictEqual(taken, [])
      const error = brokeWith(end)
      assert.strictEqual(error.kind, "rejected")
      assert.strictEqual(error.status, 403)
      assert.include(error.detail, "forbidden")
    }),
  )

  it.live("a watch silent past the inactivity deadline ends normally, to be resumed", () =>
    Effect.gen(function* () {
      const { cluster } = yield* withApi
      const api = yield* KubeApi.make(accessOfKubeconfigFile(cluster.kubeconfigPath), {
        ...apiOptions,
        watchInactivityMs: 300,
      })
      const listed = yield* api.listNodes({ limit: 100 })
      const { end } = yield* Effect.scoped(
        Effect.gen(function* () {
          const events = yield* api.watch({
            path: "/api/v1/nodes",
            resourceVersion: listed.resourceVersion,
            timeoutSeconds: 60,
          })
          while (cluster.faults.stallWatches("nodes") === 0) {
            yield* Effect.sleep("10 millis")
          }
          return yield* drain(events)
        }),
      )
      assert.isTrue(Cause.isDone(end))
    }),
  )
})
