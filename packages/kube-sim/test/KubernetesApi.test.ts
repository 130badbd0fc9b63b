import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
  Watch,
} from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type SimulatedCluster, startSimulatedCluster } from "../src/SimulatedCluster.ts"
import { eventually } from "./Eventually.ts"

interface WatchEvent {
  readonly type: string
  readonly object: { metadata?: { name?: string; resourceVersion?: string }; code?: number; reason?: string }
}

describe("the simulated cluster through @kubernetes/client-node", () => {
  let cluster: SimulatedCluster
  let kubeConfig: KubeConfig
  let core: CoreV1Api

  beforeAll(async () => {
    cluster = await startSimulatedCluster({
      nodes: 12,
      execLatency: 0,
      podTimings: { startMs: 20, readyMs: 20, terminationMs: 20 },
      bookmarkIntervalMs: 100,
      watchTimeoutSeconds: 1,
    })
    kubeConfig = new KubeConfig()
    kubeConfig.loadFromFile(cluster.kubeconfigPath)
    core = kubeConfig.makeApiClient(CoreV1Api)
  })

  afterAll(async () => {
    await cluster.close()
  })

  /** Collects the events of one watch until it ends or `stop` is called. */
  const watchEvents = async (path: string, query: Record<string, string | number | boolean>) => {
    const events: WatchEvent[] = []
    let ended = false
    let endError: unknown
    const controller = await new Watch(kubeConfig).watch(
      path,
      query,
      (type, object) => events.push({ type, object }),
      (error) => {
        ended = true
        endError = error
      },
    )
    return {
      events,
      ended: () => ended,
      endError: () => endError,
      stop: () => controller.abort(),
    }
  }

  it("lists one Running, ready device-plugin pod per node with label and field selectors", async () => {
    const namespace = cluster.namespace
    const pods = await core.listNamespacedPod({ namespace, labelSelector: cluster.labelSelector })
    expect(pods.items).toHaveLength(12)
    expect(new Set(pods.items.map((pod) => pod.spec?.nodeName))).toEqual(new Set(cluster.nodeNames()))
    for (const pod of pods.items) {
      expect(pod.status?.phase).toBe("Running")
      expect(pod.status?.containerStatuses?.every((status) => status.ready)).toBe(true)
      expect(pod.spec?.containers.map((container) => container.name)).toContain(cluster.container)
    }
    expect(Number(pods.metadata?.resourceVersion)).toBeGreaterThan(0)

    const setBased = await core.listNamespacedPod({
      namespace,
      labelSelector: "app in (nvidia-device-plugin-daemonset, other)",
    })
    expect(setBased.items).toHaveLength(12)
    expect((await core.listNamespacedPod({ namespace, labelSelector: "app=other" })).items).toHaveLength(0)
    expect((await core.listNamespacedPod({ namespace, labelSelector: "!app" })).items).toHaveLength(0)
    expect((await core.listNamespacedPod({ namespace, labelSelector: "app notin (other),app" })).items).toHaveLength(12)

    const nodeName = cluster.nodeNames()[0] ?? ""
    const onNode = await core.listNamespacedPod({ namespace, fieldSelector: `spec.nodeName=${nodeName}` })
    expect(onNode.items.map((pod) => pod.metadata?.name)).toEqual([cluster.podOf(nodeName)])
    await expect(core.listNamespacedPod({ namespace, labelSelector: "app in (" })).rejects.toMatchObject({ code: 400 })
  })

  it("gives nodes providerIDs of several clouds, and one node none", async () => {
    const nodes = await core.listNode()
    const providerIds = nodes.items.map((node) => node.spec?.providerID)
    const schemes = new Set(
      providerIds.map((id) => (id === undefined ? "none" : (/^([a-z]+):\/\//.exec(id)?.[1] ?? "oci"))),
    )
    expect(schemes.size).toBeGreaterThanOrEqual(4)
    expect(providerIds.filter((id) => id === undefined)).toHaveLength(1)
    for (const node of nodes.items) {
      expect(node.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/)
      expect(node.metadata?.labels?.["kubernetes.io/hostname"]).toBe(node.metadata?.name)
    }
    const name = cluster.nodeNames()[1] ?? ""
    expect((await core.readNode({ name })).spec?.providerID).toBe(cluster.node(name)?.providerId || undefined)
  })

  it("pages a list with limit and continue from one snapshot", async () => {
    const first = await core.listNamespacedPod({ namespace: cluster.namespace, limit: 5 })
    expect(first.items).toHaveLength(5)
    expect(first.metadata?._continue).toBeTruthy()
    const names = first.items.map((pod) => pod.metadata?.name)
    let token = first.metadata?._continue
    while (token) {
      const page = await core.listNamespacedPod({ namespace: cluster.namespace, limit: 5, _continue: token })
      expect(page.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion)
      names.push(...page.items.map((pod) => pod.metadata?.name))
      token = page.metadata?._continue
    }
    expect(names).toHaveLength(12)
    expect(new Set(names).size).toBe(12)
  })

  it("delivers add, update and delete to an informer while a pod is replaced", async () => {
    const namespace = cluster.namespace
    const informer = makeInformer<V1Pod>(
      kubeConfig,
      `/api/v1/namespaces/${namespace}/pods`,
      () => core.listNamespacedPod({ namespace, labelSelector: cluster.labelSelector }),
      cluster.labelSelector,
    )
    const added: string[] = []
    const updated: V1Pod[] = []
    const deleted: string[] = []
    informer.on("add", (pod) => added.push(pod.metadata?.name ?? ""))
    informer.on("update", (pod) => updated.push(pod))
    informer.on("delete", (pod) => deleted.push(pod.metadata?.name ?? ""))
    await informer.start()
    try {
      await eventually("the initial list", () => added.length === 12)
      const nodeName = cluster.nodeNames()[2] ?? ""
      const old = cluster.restartPod(nodeName)
      await eventually("the old pod's deletion", () => deleted.includes(old))
      await eventually(
        "a new pod on the node",
        () => cluster.podOf(nodeName) !== undefined && cluster.podOf(nodeName) !== old,
      )
      const replacement = cluster.podOf(nodeName) ?? ""
      await eventually("the new pod's add", () => added.includes(replacement))
      await eventually("the new pod becoming ready", () =>
        updated.some(
          (pod) =>
            pod.metadata?.name === replacement &&
            pod.status?.phase === "Running" &&
            pod.status.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") ===
              true,
        ),
      )
      expect(updated.some((pod) => pod.metadata?.name === old && pod.metadata.deletionTimestamp !== undefined)).toBe(
        true,
      )
      expect(informer.list(namespace).map((pod) => pod.metadata?.name)).toContain(replacement)
      expect(informer.list(namespace).map((pod) => pod.metadata?.name)).not.toContain(old)
    } finally {
      await informer.stop()
    }
  })

  it("answers a watch from a compacted resourceVersion with a 410 ERROR event, and a relist then works", async () => {
    const path = `/api/v1/namespaces/${cluster.namespace}/pods`
    const before = await core.listNamespacedPod({ namespace: cluster.namespace })
    cluster.restartPod(cluster.nodeNames()[3] ?? "")
    cluster.compactHistory()
    const gone = await watchEvents(path, { resourceVersion: before.metadata?.resourceVersion ?? "" })
    await eventually("the watch to end", gone.ended)
    expect(gone.events).toHaveLength(1)
    expect(gone.events[0]?.type).toBe("ERROR")
    expect(gone.events[0]?.object).toMatchObject({ code: 410, reason: "Expired" })

    const relisted = await core.listNamespacedPod({ namespace: cluster.namespace })
    const resumed = await watchEvents(path, { resourceVersion: relisted.metadata?.resourceVersion ?? "" })
    try {
      const nodeName = cluster.nodeNames()[4] ?? ""
      const old = cluster.restartPod(nodeName)
      await eventually("events after the relist", () =>
        resumed.events.some((event) => event.type === "DELETED" && event.object.metadata?.name === old),
      )
    } finally {
      resumed.stop()
    }
  })

  it("makes an informer relist when its resourceVersion has been compacted away", async () => {
    const namespace = cluster.namespace
    let lists = 0
    const informer = makeInformer<V1Pod>(
      kubeConfig,
      `/api/v1/namespaces/${namespace}/pods`,
      () => {
        lists++
        return core.listNamespacedPod({ namespace, labelSelector: cluster.labelSelector })
      },
      cluster.labelSelector,
    )
    await informer.start()
    try {
      await eventually("the first list", () => lists === 1 && informer.list(namespace).length === 12)
      await eventually("the informer's watch", () => cluster.stats().watchesOpen === 1)
      expect(cluster.faults.stallWatches("pods")).toBe(1)
      const nodeName = cluster.nodeNames()[7] ?? ""
      const old = cluster.restartPod(nodeName)
      await eventually(
        "the replacement",
        () => cluster.podOf(nodeName) !== undefined && cluster.podOf(nodeName) !== old,
      )
      cluster.compactHistory()
      await eventually("a relist once the silent watch ended", () => lists >= 2)
      await eventually("the cache to hold the replacement", () =>
        informer.list(namespace).some((pod) => pod.metadata?.name === cluster.podOf(nodeName)),
      )
    } finally {
      await informer.stop()
    }
  })

  it("answers a list at an exact compacted resourceVersion with 410 Gone", async () => {
    const listed = await core.listNamespacedPod({ namespace: cluster.namespace })
    const revision = listed.metadata?.resourceVersion ?? ""
    const exact = await core.listNamespacedPod({
      namespace: cluster.namespace,
      resourceVersion: revision,
      resourceVersionMatch: "Exact",
    })
    expect(exact.metadata?.resourceVersion).toBe(revision)
    cluster.restartPod(cluster.nodeNames()[5] ?? "")
    cluster.compactHistory()
    await expect(
      core.listNamespacedPod({
        namespace: cluster.namespace,
        resourceVersion: revision,
        resourceVersionMatch: "Exact",
      }),
    ).rejects.toMatchObject({ code: 410 })
  })

  it("sends bookmarks when asked and ends a watch cleanly at timeoutSeconds", async () => {
    const listed = await core.listNamespacedPod({ namespace: cluster.namespace })
    const watch = await watchEvents(`/api/v1/namespaces/${cluster.namespace}/pods`, {
      resourceVersion: listed.metadata?.resourceVersion ?? "",
      allowWatchBookmarks: true,
      timeoutSeconds: 1,
    })
    await eventually("a bookmark", () => watch.events.some((event) => event.type === "BOOKMARK"))
    const bookmark = watch.events.find((event) => event.type === "BOOKMARK")
    expect(Number(bookmark?.object.metadata?.resourceVersion)).toBeGreaterThanOrEqual(
      Number(listed.metadata?.resourceVersion),
    )
    await eventually("the server to end the watch", watch.ended)
    expect(watch.endError()).toBeFalsy()
  })

  it("patches a node with JSON patch, merge patch and strategic merge patch", async () => {
    const name = cluster.nodeNames()[6] ?? ""
    const jsonPatched = await core.patchNode(
      {
        name,
        body: [
          { op: "add", path: "/metadata/labels/gpu-serials.io~1gpu-0", value: "1652923034028" },
          { op: "test", path: "/metadata/name", value: name },
        ],
      },
      setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
    )
    expect(jsonPatched.metadata?.labels?.["gpu-serials.io/gpu-0"]).toBe("1652923034028")

    const merged = await core.patchNode(
      { name, body: { metadata: { labels: { "gpu-serials.io/gpu-0": null, "gpu-serials.io/gpu-count": "8" } } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    )
    expect(merged.metadata?.labels?.["gpu-serials.io/gpu-0"]).toBeUndefined()
    expect(merged.metadata?.labels?.["gpu-serials.io/gpu-count"]).toBe("8")
    expect(merged.metadata?.labels?.["kubernetes.io/hostname"]).toBe(name)

    const strategic = await core.patchNodeStatus(
      {
        name,
        body: {
          status: { conditions: [{ type: "GpuInventoryReported", status: "True", reason: "Reported", message: "ok" }] },
        },
      },
      setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch),
    )
    const types = strategic.status?.conditions?.map((condition) => condition.type)
    expect(types).toContain("GpuInventoryReported")
    expect(types).toContain("Ready")
    expect(Number(strategic.metadata?.resourceVersion)).toBeGreaterThan(Number(merged.metadata?.resourceVersion))

    await expect(
      core.patchNode(
        { name, body: [{ op: "test", path: "/metadata/name", value: "another-node" }] },
        setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
      ),
    ).rejects.toMatchObject({ code: 422 })
  })

  it("rejects a lease update carrying a stale resourceVersion with 409 Conflict", async () => {
    const coordination = kubeConfig.makeApiClient(CoordinationV1Api)
    const namespace = "gpu-serials"
    const created = await coordination.createNamespacedLease({
      namespace,
      body: {
        metadata: { name: "gpu-serials-leader" },
        spec: { holderIdentity: "replica-a", leaseDurationSeconds: 15 },
      },
    })
    const renewed = await coordination.replaceNamespacedLease({
      name: "gpu-serials-leader",
      namespace,
      body: { ...created, spec: { ...created.spec, holderIdentity: "replica-a", leaseTransitions: 0 } },
    })
    expect(Number(renewed.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion))

    const stale = coordination.replaceNamespacedLease({
      name: "gpu-serials-leader",
      namespace,
      body: { ...created, spec: { ...created.spec, holderIdentity: "replica-b" } },
    })
    await expect(stale).rejects.toBeInstanceOf(ApiException)
    await expect(stale).rejects.toMatchObject({ code: 409 })
    await expect(
      coordination.createNamespacedLease({ namespace, body: { metadata: { name: "gpu-serials-leader" } } }),
    ).rejects.toMatchObject({ code: 409 })
    const current = await coordination.readNamespacedLease({ name: "gpu-serials-leader", namespace })
    expect(current.spec?.holderIdentity).toBe("replica-a")
  })
})
