import { assert, describe, it } from "@effect/vitest"
import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { Duration, Effect } from "effect"
import type { CacheChange } from "../../../src/kubeclient/cache/InformerCache.ts"
import * as ResourceInformer from "../../../src/kubeclient/cache/ResourceInformer.ts"
import { KubeApi } from "../../../src/kubeclient/rest/KubeApi.ts"
import { KubeApiError } from "../../../src/kubeclient/rest/KubeApiError.ts"
import { type ClusterNode, clusterNodeOf } from "../../../src/receiver/kube/ClusterNode.ts"
import { accessOfKubeconfigFile } from "../../support/KubeconfigAccess.ts"
import { recordingMetrics } from "../../support/RecordingMetrics.ts"

const nodeCount = 7
const pageSize = 3

const options: ResourceInformer.InformerOptions = {
  pageSize,
  stallTimeoutMs: 5_000,
  restartBackoff: { baseMs: 50, maxMs: 400, jitter: 0.5 },
  watchSeconds: { min: 300, max: 600 },
}

/** The simulated cluster over HTTPS and the real API client against it, both closed with the test's scope. */
const startCluster = Effect.gen(function* () {
  const cluster: SimulatedCluster = yield* Effect.acquireRelease(
    Effect.promise(() =>
      startSimulatedCluster({
        nodes: nodeCount,
        modelMix: { t4: 1 },
        execLatency: 5,
        podTimings: { startMs: 20, readyMs: 20, terminationMs: 20 },
        bookmarkIntervalMs: 200,
      }),
    ),
    (started) => Effect.promise(() => started.close()),
  )
  const api = yield* KubeApi.make(accessOfKubeconfigFile(cluster.kubeconfigPath), {
    qps: 200,
    burst: 200,
    requestTimeoutMs: 5_000,
    execHandshakeTimeoutMs: 5_000,
  })
  return { cluster, api }
})

/** Polls `condition` until it holds or `timeout` passes; answers whether it held. */
const heldWithin = (condition: () => boolean, timeout: Duration.Input) =>
  Effect.gen(function* () {
    const deadline = Date.now() + Duration.toMillis(Duration.fromInputUnsafe(timeout))
    while (!condition()) {
      if (Date.now() > deadline) return false
      yield* Effect.sleep("20 millis")
    }
    return true
  })

const eventually = (what: string, condition: () => boolean) =>
  heldWithin(condition, "20 seconds").pipe(
    Effect.flatMap((held) => (held ? Effect.void : Effect.die(new Error(`timed out waiting for ${what}`)))),
  )

const keysOf = (changes: ReadonlyArray<CacheChange<ClusterNode>>, tag: CacheChange<ClusterNode>["_tag"]) =>
  changes
    .filter((change) => change._tag === tag)
    .map((change) => change.object.key)
    .sort()

describe("ResourceInformer against the simulated cluster over HTTPS", () => {
  it.live(
    "asks for the next page as soon as a page's head names it, while that page is still handled, and hands each page over as it arrives",
    () =>
      Effect.gen(function* () {
        const { cluster, api } = yield* startCluster
        const { layer } = recordingMetrics()
        const changes: Array<CacheChange<ClusterNode>> = []
        /** For each page after the first: the changes handed over, and whether the informer said it was synced, when it was asked for. */
        const beforeLaterPages: Array<{ readonly changes: number; readonly synced: boolean }> = []
        let informer: ResourceInformer.ResourceInformer<ClusterNode> | undefined
        const list = (page: ResourceInformer.ListPageKept<ClusterNode>) =>
          Effect.suspend(() => {
            if (page.continueToken !== undefined) {
              beforeLaterPages.push({ changes: changes.length, synced: informer?.isSynced() ?? false })
            }
            return api.listNodes(page)
          })
        const requestsBefore = cluster.stats().requests
        /** Whether the API server had the second page's request while the first page's first object was handed over. */
        let secondPageAtServer: boolean | undefined
        informer = yield* ResourceInformer.start(
          {
            resource: "nodes",
            list,
            watch: (resourceVersion, timeoutSeconds) =>
              api.watch({ path: "/api/v1/nodes", resourceVersion, timeoutSeconds }),
            decode: (object) => clusterNodeOf(object),
          },
          options,
          (change) =>
            Effect.gen(function* () {
              if (secondPageAtServer === undefined) {
                // An informer that asks for a page only after the one before was handled never sends the
                // second request while this waits: the wait ends unmet and the assertion below fails.
                secondPageAtServer = yield* heldWithin(
                  () => cluster.stats().requests >= requestsBefore + 2,
                  "10 seconds",
                )
              }
              changes.push(change)
            }),
        ).pipe(Effect.provide(layer))
        yield* informer.synced.pipe(Effect.timeout("60 seconds"))

        assert.isTrue(secondPageAtServer)
        // The second page is asked for before the first one's objects are handed over, the third after them
        // and before the second one's: never more than one page ahead.
        assert.deepStrictEqual(beforeLaterPages, [
          { changes: 0, synced: false },
          { changes: pageSize, synced: false },
        ])
        assert.deepStrictEqual(keysOf(changes, "Added"), [...cluster.nodeNames()])
        assert.strictEqual(changes.length, nodeCount)
        assert.strictEqual(informer.size(), nodeCount)
        assert.deepStrictEqual(yield* informer.health, { healthy: true })
      }).pipe(Effect.scoped),
  )

  it.live(
    "a list whose head names no next page is paged after each page is handled, each handed over as it arrives",
    () =>
      Effect.gen(function* () {
        const { cluster, api } = yield* startCluster
        const { layer } = recordingMetrics()
        const changes: Array<CacheChange<ClusterNode>> = []
        const beforeLaterPages: Array<{ readonly changes: number; readonly synced: boolean }> = []
        let pagesServed = 0
        let informer: ResourceInformer.ResourceInformer<ClusterNode> | undefined
        // A source that never passes the head on, as for a body with its items before its metadata.
        const list = ({ limit, continueToken, keep }: ResourceInformer.ListPageKept<ClusterNode>) =>
          Effect.gen(function* () {
            if (continueToken !== undefined) {
              beforeLaterPages.push({ changes: changes.length, synced: informer?.isSynced() ?? false })
            }
            const listed = yield* api.listNodes({
              limit,
              keep,
              ...(continueToken === undefined ? {} : { continueToken }),
            })
            pagesServed++
            return listed
          })
        informer = yield* ResourceInformer.start(
          {
            resource: "nodes",
            list,
            watch: (resourceVersion, timeoutSeconds) =>
              api.watch({ path: "/api/v1/nodes", resourceVersion, timeoutSeconds }),
            decode: (object) => clusterNodeOf(object),
          },
          options,
          (change) => Effect.sync(() => changes.push(change)),
        ).pipe(Effect.provide(layer))
        yield* informer.synced.pipe(Effect.timeout("60 seconds"))

        assert.deepStrictEqual(beforeLaterPages, [
          { changes: pageSize, synced: false },
          { changes: 2 * pageSize, synced: false },
        ])
        assert.strictEqual(pagesServed, 3)
        assert.deepStrictEqual(keysOf(changes, "Added"), [...cluster.nodeNames()])
        assert.strictEqual(changes.length, nodeCount)
        assert.strictEqual(informer.size(), nodeCount)
        assert.deepStrictEqual(yield* informer.health, { healthy: true })
      }).pipe(Effect.scoped),
  )

  it.live(
    "a relist after 410 Gone replaces the cache: what went while no watch ran is deleted, nothing else changes",
    () =>
      Effect.gen(function* () {
        const { cluster, api } = yield* startCluster
        const { recorded, layer } = recordingMetrics()
        const changes: Array<CacheChange<ClusterNode>> = []
        const removed = cluster.nodeNames()[2] as string
        let watches = 0
        let lists = 0
        const informer = yield* ResourceInformer.start<ClusterNode>(
          {
            resource: "nodes",
            list: (page) => api.listNodes(page).pipe(Effect.tap(() => Effect.sync(() => lists++))),
            watch: (resourceVersion, timeoutSeconds) =>
              Effect.suspend(() => {
                watches++
                if (watches > 1) return api.watch({ path: "/api/v1/nodes", resourceVersion, timeoutSeconds })
                // The node goes while no watch runs; the first watch is refused as too old.
                cluster.removeNode(removed)
                return Effect.fail(
                  new KubeApiError({ operation: "watch nodes", kind: "gone", status: 410, detail: "too old" }),
                )
              }),
            decode: (object) => clusterNodeOf(object),
          },
          options,
          (change) => Effect.sync(() => changes.push(change)),
        ).pipe(Effect.provide(layer))
        yield* informer.synced.pipe(Effect.timeout("30 seconds"))
        yield* eventually("the deletion found by the relist", () => changes.some((change) => change._tag === "Deleted"))
        yield* eventually("the watch after the relist", () => watches >= 2)

        // Three pages of the first list, two of the relist without the removed node.
        assert.strictEqual(lists, Math.ceil(nodeCount / pageSize) + Math.ceil((nodeCount - 1) / pageSize))
        assert.strictEqual(changes.length, nodeCount + 1)
        assert.deepStrictEqual(keysOf(changes, "Added"), [...cluster.nodeNames(), removed].sort())
        assert.deepStrictEqual(keysOf(changes, "Deleted"), [removed])
        assert.isUndefined(informer.get(removed))
        assert.strictEqual(informer.size(), nodeCount - 1)
        assert.deepStrictEqual(recorded.informerRestarts, ["nodes"])
      }).pipe(Effect.scoped),
  )
})
