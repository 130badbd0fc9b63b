import { Writable } from "node:stream"
import {
  ApiException,
  type ConfigurationOptions,
  CoordinationV1Api,
  CoreV1Api,
  Exec,
  KubeConfig,
  Observable,
} from "@kubernetes/client-node"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type SimulatedClient, type SimulatedCluster, startSimulatedCluster } from "../src/SimulatedCluster.ts"

const discard = () =>
  new Writable({
    write(_chunk, _encoding, callback) {
      callback()
    },
  })

const withSignal = (signal: AbortSignal): ConfigurationOptions => ({
  middleware: [
    {
      pre: (context) => {
        context.setSignal(signal)
        return new Observable(Promise.resolve(context))
      },
      post: (context) => new Observable(Promise.resolve(context)),
    },
  ],
  middlewareMergeStrategy: "append",
})

describe("clients of the simulated cluster", () => {
  let cluster: SimulatedCluster
  let replicaA: SimulatedClient
  let replicaB: SimulatedClient

  const configOf = (path: string) => {
    const config = new KubeConfig()
    config.loadFromFile(path)
    return config
  }
  const leasesOf = (client: SimulatedClient) => configOf(client.kubeconfigPath).makeApiClient(CoordinationV1Api)
  const lease = (name: string) => ({
    metadata: { name, namespace: "gpu-serials" },
    spec: { holderIdentity: "replica-a", leaseDurationSeconds: 15 },
  })

  beforeAll(async () => {
    cluster = await startSimulatedCluster({
      nodes: 2,
      execLatency: 0,
      podTimings: { startMs: 10, readyMs: 10, terminationMs: 10 },
    })
    replicaA = await cluster.addClient("replica-a")
    replicaB = await cluster.addClient("replica-b")
  })

  afterEach(() => cluster.faults.clear())

  afterAll(async () => {
    await cluster.close()
  })

  it("gives each client a kubeconfig with a token of its own", async () => {
    expect(replicaA.token).not.toBe(replicaB.token)
    expect(replicaA.token).not.toBe(cluster.token)
    const nodes = await configOf(replicaA.kubeconfigPath).makeApiClient(CoreV1Api).listNode()
    expect(nodes.items).toHaveLength(2)
    await expect(cluster.addClient("replica-a")).rejects.toThrow(/already exists/)
  })

  it("refuses a token it does not know with 401", async () => {
    const config = configOf(replicaA.kubeconfigPath)
    const user = config.getCurrentUser()
    if (user !== null) (user as { token?: string }).token = "not-a-token"
    await expect(config.makeApiClient(CoreV1Api).listNode()).rejects.toMatchObject({ code: 401 })
  })

  it("logs which client ran each exec, with the server's start and end times", async () => {
    const node = cluster.nodeNames()[0] ?? ""
    const before = Date.now()
    for (const client of [replicaA, replicaB]) {
      await new Promise<void>((resolve, reject) => {
        new Exec(configOf(client.kubeconfigPath))
          .exec(
            cluster.namespace,
            cluster.podOf(node) ?? "",
            cluster.container,
            ["nvidia-smi", "-L"],
            discard(),
            null,
            null,
            false,
          )
          .then((socket) => socket.on("close", () => resolve()), reject)
      })
    }
    const deadline = Date.now() + 5_000
    while (cluster.execLog().some((session) => session.endedAtMs === undefined) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10))
    const sessions = cluster.execLog().filter((session) => session.startedAtMs >= before)
    expect(sessions.map((session) => session.client)).toEqual(["replica-a", "replica-b"])
    for (const session of sessions) {
      expect(session).toMatchObject({ pod: cluster.podOf(node), node })
      expect(session.endedAtMs).toBeGreaterThanOrEqual(session.startedAtMs)
    }
  })

  it("fails only the requests of the client a fault names", async () => {
    await leasesOf(replicaA).createNamespacedLease({ namespace: "gpu-serials", body: lease("only-a") })
    cluster.faults.inject({
      kind: "server-error",
      status: 503,
      match: { client: "replica-a", resource: "leases", verb: "get" },
      times: 2,
    })
    await expect(
      leasesOf(replicaB).readNamespacedLease({ namespace: "gpu-serials", name: "only-a" }),
    ).resolves.toMatchObject({
      spec: { holderIdentity: "replica-a" },
    })
    await expect(
      leasesOf(replicaA).readNamespacedLease({ namespace: "gpu-serials", name: "only-a" }),
    ).rejects.toMatchObject({
      code: 503,
    })
  })

  it("holds a request unanswered until its client gives up", async () => {
    await leasesOf(replicaA).createNamespacedLease({ namespace: "gpu-serials", body: lease("hung") })
    cluster.faults.inject({ kind: "hang", match: { client: "replica-a", resource: "leases", name: "hung" } })
    const controller = new AbortController()
    let settled = false
    const outcome = leasesOf(replicaA)
      .readNamespacedLease({ namespace: "gpu-serials", name: "hung" }, withSignal(controller.signal))
      .then(
        () => "answered",
        () => "gave up",
      )
      .finally(() => {
        settled = true
      })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(settled).toBe(false)
    controller.abort()
    expect(await outcome).toBe("gave up")
    // The fault was used up: the next request is answered.
    await expect(
      leasesOf(replicaA).readNamespacedLease({ namespace: "gpu-serials", name: "hung" }),
    ).resolves.toBeDefined()
  })

  it("answers a write 409 Conflict once when asked", async () => {
    const leases = leasesOf(replicaB)
    const created = await leases.createNamespacedLease({ namespace: "gpu-serials", body: lease("raced") })
    cluster.faults.inject({ kind: "conflict", match: { client: "replica-b", verb: "update", resource: "leases" } })
    const update = () => leases.replaceNamespacedLease({ namespace: "gpu-serials", name: "raced", body: created })
    const refused = await update().catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(ApiException)
    expect((refused as ApiException<string>).code).toBe(409)
    expect(JSON.parse((refused as ApiException<string>).body)).toMatchObject({ reason: "Conflict" })
    await expect(update()).resolves.toMatchObject({ spec: { holderIdentity: "replica-a" } })
  })

  it("denies one client's requests and not another's", async () => {
    cluster.access.deny({ client: "replica-b", resource: "leases" })
    try {
      await expect(leasesOf(replicaB).listNamespacedLease({ namespace: "gpu-serials" })).rejects.toMatchObject({
        code: 403,
      })
      await expect(leasesOf(replicaA).listNamespacedLease({ namespace: "gpu-serials" })).resolves.toBeDefined()
    } finally {
      cluster.access.allowAll()
    }
  })
})
