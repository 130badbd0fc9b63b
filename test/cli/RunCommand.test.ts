import { spawn } from "node:child_process"
import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { afterEach, describe, expect, it } from "vitest"
import { freePort } from "../../src/health/FreePort.ts"
import { upToDateCompiledCli } from "../support/CompiledCli.ts"
import { gpuSerials, repositoryRoot } from "./GpuSerialsCli.ts"

let cluster: SimulatedCluster | undefined

afterEach(async () => {
  await cluster?.close()
  cluster = undefined
})

interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

describe("gpu-serials run", () => {
  it("exits 0 on SIGTERM in the middle of the initial sync, with only whole records on stdout", async () => {
    cluster = await startSimulatedCluster({
      nodes: 8,
      modelMix: { "h100-hgx": 4, t4: 4 },
      seed: "sigterm",
      execLatency: { kind: "uniform", minMs: 200, maxMs: 4_000 },
    })
    const port = await freePort()
    const child = spawn(
      process.execPath,
      [
        upToDateCompiledCli(),
        "run",
        "--kubeconfig",
        cluster.kubeconfigPath,
        "--server-port",
        String(port),
        "--workers",
        "2",
      ],
      { cwd: repositoryRoot, env: { PATH: process.env.PATH ?? "", CLUSTER_NAME: "sigterm" } },
    )
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    const running = new Promise<void>((resolve) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString()
        if (stderr.includes('"msg":"gpu-serials running"')) resolve()
      })
    })
    const finished = new Promise<Finished>((resolve) => {
      child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr }))
    })
    await running
    const ready = await fetch(`http://127.0.0.1:${port}/healthz`)
    expect(ready.status).toBe(200)
    child.kill("SIGTERM")
    const result = await finished

    expect(result.signal).toBeNull()
    expect(result.code).toBe(0)
    const lines = result.stdout.split("\n").filter((line) => line !== "")
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ schema: "gpu-serials/v1", cluster: "sigterm" })
    expect(lines.length).toBeLessThan(4 * 8 + 4)
    for (const line of result.stderr.split("\n").filter((entry) => entry !== ""))
      expect(() => JSON.parse(line)).not.toThrow()
  }, 30_000)

  it("checks the leader election timings, naming the setting", () => {
    const run = gpuSerials(["run"], {
      env: { CLUSTER_NAME: "prod", LEADER_ELECTION: "true", LEASE_DURATION: "5s", LEASE_RENEW_DEADLINE: "10s" },
    })
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("LEASE_DURATION: lease duration > renew deadline > retry period must hold")
  })

  it("fails with exit code 1 and a clear message when the cluster cannot be reached", () => {
    const run = gpuSerials(["run", "--kubeconfig", "/nonexistent/kubeconfig"], { env: { CLUSTER_NAME: "prod" } })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("the service could not start")
  })
})
