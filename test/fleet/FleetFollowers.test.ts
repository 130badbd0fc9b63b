import { randomBytes } from "node:crypto"
import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { afterEach, describe, expect, it } from "vitest"
import { freePort } from "../../src/health/FreePort.ts"
import { type RunningCli, startGpuSerials } from "../cli/GpuSerialsCli.ts"

let cluster: SimulatedCluster | undefined
const running: Array<RunningCli> = []

afterEach(async () => {
  for (const cli of running.splice(0)) {
    if (cli.child.exitCode === null && cli.child.signalCode === null) {
      cli.child.kill("SIGKILL")
      await cli.exited
    }
  }
  await cluster?.close()
  cluster = undefined
})

interface Status {
  readonly role: string
  readonly leader?: string
  readonly source: string
  readonly gpus: number
}

const status = async (port: number): Promise<Status> =>
  (await (
    await fetch(`http://127.0.0.1:${port}/api/v1/status`, { signal: AbortSignal.timeout(5_000) })
  ).json()) as Status

const until = async (what: string, condition: () => Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe("the fleet API with leader election", () => {
  it("the leader answers from its inventory; the follower says it follows, names the leader and lists nothing", async () => {
    const sim = await startSimulatedCluster({
      nodes: 2,
      modelMix: { "h100-hgx": 2 },
      seed: "fleet-ha",
      execLatency: 20,
    })
    cluster = sim
    const leaseName = `fleet-${randomBytes(3).toString("hex")}`
    const start = async (name: string) => {
      const client = await sim.addClient(name)
      const port = await freePort()
      const cli = startGpuSerials(["run", "--kubeconfig", client.kubeconfigPath, "--server-port", String(port)], {
        CLUSTER_NAME: "ha",
        SERVER_ADDRESS: "127.0.0.1",
        LEADER_ELECTION: "true",
        POD_NAME: name,
        LEASE_NAME: leaseName,
        LEASE_NAMESPACE: "gpu-serials",
        LEASE_DURATION: "3s",
        LEASE_RENEW_DEADLINE: "2s",
        LEASE_RETRY_PERIOD: "500ms",
        SHUTDOWN_TIMEOUT: "5s",
      })
      running.push(cli)
      await cli.logged("gpu-serials running")
      return port
    }
    const first = await start("replica-a")
    await until("replica-a leads and knows the GPUs", async () => {
      const answer = await status(first)
      return answer.role === "leader" && answer.gpus === 16
    })
    const second = await start("replica-b")
    await until("replica-b names the leader", async () => (await status(second)).leader === "replica-a")
    expect(await status(second)).toMatchObject({ role: "follower", source: "none", gpus: 0, leader: "replica-a" })
    expect(await status(first)).toMatchObject({ role: "leader", source: "inventory", leader: "replica-a" })
    const listed = (await (await fetch(`http://127.0.0.1:${second}/api/v1/gpus`)).json()) as { total: number }
    expect(listed.total).toBe(0)
  }, 60_000)
})
