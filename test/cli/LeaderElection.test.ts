import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { type SimulatedClient, type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { afterEach, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { freePort } from "../../src/health/FreePort.ts"
import { jsonLines, type RunningCli, startGpuSerials } from "./GpuSerialsCli.ts"

const leaseNamespace = "gpu-serials"
/** Short timings: a crashed leader's lease expires in 3s, a follower tries every 500ms (with jitter). */
const timings = { LEASE_DURATION: "3s", LEASE_RENEW_DEADLINE: "2s", LEASE_RETRY_PERIOD: "500ms" }

interface Replica {
  readonly name: string
  readonly client: SimulatedClient
  readonly port: number
  readonly cli: RunningCli
}

let cluster: SimulatedCluster | undefined
const replicas: Array<Replica> = []

afterEach(async () => {
  for (const replica of replicas.splice(0)) {
    if (replica.cli.child.exitCode === null && replica.cli.child.signalCode === null) {
      replica.cli.child.kill("SIGKILL")
      await replica.cli.exited
    }
  }
  await cluster?.close()
  cluster = undefined
})

const until = async (what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const startCluster = async (seed: string) => {
  cluster = await startSimulatedCluster({
    nodes: 3,
    modelMix: { "h100-hgx": 2, t4: 1 },
    seed,
    execLatency: 20,
    podTimings: { startMs: 20, readyMs: 20, terminationMs: 20 },
  })
  return cluster
}

const startReplica = async (
  client: SimulatedClient,
  leaseName: string,
  env: Readonly<Record<string, string>> = {},
): Promise<Replica> => {
  const port = await freePort()
  const cli = startGpuSerials(["run", "--kubeconfig", client.kubeconfigPath, "--server-port", String(port)], {
    CLUSTER_NAME: "ha",
    SERVER_ADDRESS: "127.0.0.1",
    LEADER_ELECTION: "true",
    POD_NAME: client.name,
    LEASE_NAME: leaseName,
    LEASE_NAMESPACE: leaseNamespace,
    RESYNC: "1s",
    SHUTDOWN_TIMEOUT: "5s",
    ...timings,
    ...env,
  })
  const replica = { name: client.name, client, port, cli }
  replicas.push(replica)
  await cli.logged("gpu-serials running")
  return replica
}

const leaderGauge = async (replica: Replica): Promise<number | undefined> => {
  const text = await (await fetch(`http://127.0.0.1:${replica.port}/metrics`)).text()
  const line = text.split("\n").find((entry) => entry.startsWith("gpu_serials_leader "))
  return line === undefined ? undefined : Number(line.split(" ")[1])
}

/** The `gpu_serials_gpu_info` series a replica exports: the GPUs it speaks for. */
const gpuInfoSeries = async (replica: Replica): Promise<number> => {
  const text = await (await fetch(`http://127.0.0.1:${replica.port}/metrics`)).text()
  return text.split("\n").filter((line) => line.startsWith("gpu_serials_gpu_info{")).length
}

const gpusOf = (sim: SimulatedCluster): number =>
  sim.nodeNames().reduce((total, name) => total + (sim.node(name)?.gpus.length ?? 0), 0)

const kubectlLease = (kubeconfig: string, leaseName: string): Promise<Record<string, unknown>> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      "/usr/bin/kubectl",
      ["--kubeconfig", kubeconfig, "get", "lease", "-n", leaseNamespace, leaseName, "-o", "yaml"],
      { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp" } },
    )
    let stdout = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.on("error", reject)
    child.on("close", (code) =>
      code === 0 ? resolve(parse(stdout) as Record<string, unknown>) : reject(new Error(`kubectl exited ${code}`)),
    )
  })

/** The exec sessions a replica opened, as the API server logged them. */
const sessionsOf = (sim: SimulatedCluster, client: string) =>
  sim.execLog().filter((session) => session.client === client)

describe("gpu-serials run with leader election: two replicas", () => {
  it("only the leader reads; SIGTERM hands over at once, kill -9 within the lease duration", async () => {
    const sim = await startCluster("ha-handover")
    const leaseName = `handover-${randomBytes(3).toString("hex")}`
    const a = await sim.addClient("replica-a")
    const b = await sim.addClient("replica-b")

    const first = await startReplica(a, leaseName)
    await first.cli.logged("leadership acquired")
    const second = await startReplica(b, leaseName)
    await until("replica-a reads", () => sessionsOf(sim, "replica-a").length >= 3)

    // The follower is ready, shows it follows, and does not read.
    const readyz = await fetch(`http://127.0.0.1:${second.port}/readyz`)
    expect(readyz.status).toBe(200)
    expect(await readyz.json()).toMatchObject({
      checks: { informers: "ok (following)", readings: "ok (following)", inventory: "ok (following)" },
    })
    expect(await leaderGauge(second)).toBe(0)
    expect(await leaderGauge(first)).toBe(1)
    // Only the leader speaks for the fleet: the follower exports no GPU info to join twice.
    await until("the leader exports every GPU's info", async () => (await gpuInfoSeries(first)) === gpusOf(sim))
    expect(await gpuInfoSeries(second)).toBe(0)
    const lease = (await kubectlLease(sim.kubeconfigPath, leaseName)) as { spec: Record<string, unknown> }
    expect(lease.spec).toMatchObject({ holderIdentity: "replica-a", leaseDurationSeconds: 3, leaseTransitions: 0 })
    expect(String(lease.spec.renewTime)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    expect(sessionsOf(sim, "replica-b")).toEqual([])

    // SIGTERM: the leader stops reading, releases the lease, and the follower takes it at once.
    first.cli.child.kill("SIGTERM")
    expect(await first.cli.exited).toEqual({ code: 0, signal: null })
    const exitedAtMs = Date.now()
    expect(jsonLines(first.cli.stderr()).filter((line) => line.msg === "leadership released")).toHaveLength(1)
    await second.cli.logged("leadership acquired")
    expect(Date.now() - exitedAtMs).toBeLessThan(3_000)
    await until("replica-b reads", () => sessionsOf(sim, "replica-b").length > 0)
    const lastOfA = Math.max(
      ...sessionsOf(sim, "replica-a").map((session) => session.endedAtMs ?? Number.POSITIVE_INFINITY),
    )
    expect(Math.min(...sessionsOf(sim, "replica-b").map((session) => session.startedAtMs))).toBeGreaterThanOrEqual(
      lastOfA,
    )
    expect(await leaderGauge(second)).toBe(1)
    await until("the new leader exports every GPU's info", async () => (await gpuInfoSeries(second)) === gpusOf(sim))

    // replica-a comes back as a follower; kill -9 of the leader: the lease expires, replica-a takes it.
    replicas.splice(replicas.indexOf(first), 1)
    const third = await startReplica(a, leaseName)
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(await leaderGauge(third)).toBe(0)
    const sessionsOfABefore = sessionsOf(sim, "replica-a").length
    second.cli.child.kill("SIGKILL")
    await second.cli.exited
    const killedAtMs = Date.now()
    await third.cli.logged("leadership acquired")
    // LEASE_DURATION + a jittered LEASE_RETRY_PERIOD (up to 2.2 × 500ms), with slack.
    expect(Date.now() - killedAtMs).toBeLessThan(3_000 + 1_100 + 2_000)
    await until("replica-a reads again", () => sessionsOf(sim, "replica-a").length > sessionsOfABefore)
    const lastOfB = Math.max(...sessionsOf(sim, "replica-b").map((session) => session.endedAtMs ?? killedAtMs))
    const resumed = sessionsOf(sim, "replica-a").slice(sessionsOfABefore)
    expect(Math.min(...resumed.map((session) => session.startedAtMs))).toBeGreaterThanOrEqual(lastOfB)
    expect((await kubectlLease(sim.kubeconfigPath, leaseName)) as unknown).toMatchObject({
      spec: { holderIdentity: "replica-a", leaseTransitions: 2 },
    })
  }, 60_000)

  it("a failover rebuilds the inventory from the durable store: a swap made meanwhile is moved, nothing is added", async () => {
    const sim = await startCluster("ha-failover")
    const suffix = randomBytes(4).toString("hex")
    const leaseName = `failover-${suffix}`
    const nats = {
      EXPORTER_TYPE: "stdout,nats",
      INVENTORY_STORE: "nats",
      NATS_URL: "nats://127.0.0.1:4222",
      NATS_KV_BUCKET: `ha_${suffix}`,
      NATS_STREAM: `HA_${suffix}`,
      NATS_SUBJECT_PREFIX: `ha.${suffix}`,
    }
    const a = await sim.addClient("replica-a")
    const b = await sim.addClient("replica-b")
    const total = sim.nodeNames().reduce((sum, name) => sum + (sim.node(name)?.gpus.length ?? 0), 0)
    const eventsOf = (replica: Replica) => jsonLines(replica.cli.stdout())

    const first = await startReplica(a, leaseName, nats)
    await first.cli.logged("leadership acquired")
    await until(
      "replica-a announces the fleet",
      () => eventsOf(first).filter((line) => line.event === "added").length === total,
    )
    const second = await startReplica(b, leaseName, nats)

    // replica-a can no longer renew: it stops reading, keeps running as a follower, and replica-b takes over.
    sim.access.deny({ client: "replica-a", resource: "leases" })
    await first.cli.logged("leadership lost")
    const [left, right] = sim.nodeNames().filter((name) => sim.node(name)?.model === "h100-hgx")
    if (left === undefined || right === undefined) throw new Error("the fleet lacks two H100 nodes")
    const swapped = sim.swapGpus(left, right)
    await second.cli.logged("leadership acquired")
    await until("replica-b reports the swap", () =>
      swapped.every((uuid) => eventsOf(second).some((line) => line.event === "moved" && line.uuid === uuid)),
    )
    expect(eventsOf(second).filter((line) => line.event === "added")).toEqual([])
    expect(first.cli.child.exitCode).toBeNull()
    const lost = jsonLines(first.cli.stderr()).filter((line) => line.msg === "leadership lost")
    expect(lost).toEqual([expect.objectContaining({ level: "warn", reason: expect.stringMatching(/could not renew/) })])
    expect(await leaderGauge(first)).toBe(0)
    expect(await leaderGauge(second)).toBe(1)
  }, 60_000)
})
