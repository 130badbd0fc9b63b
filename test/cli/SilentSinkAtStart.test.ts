import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { afterEach, describe, expect, it } from "vitest"
import { freePort } from "../../src/health/FreePort.ts"
import { jsonLines, type RunningCli, startGpuSerials } from "./GpuSerialsCli.ts"
import { type HungCollector, startMuteServer } from "./SilentSinks.ts"

let cluster: SimulatedCluster | undefined
let sink: HungCollector | undefined
let service: RunningCli | undefined

afterEach(async () => {
  if (service !== undefined && service.child.exitCode === null && service.child.signalCode === null) {
    service.child.kill("SIGKILL")
    await service.exited
  }
  await sink?.close()
  await cluster?.close()
  service = undefined
  sink = undefined
  cluster = undefined
})

const until = async (what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe("gpu-serials run with a sink that takes connections and never answers at start", () => {
  it.each([
    [
      "nats",
      (address: string) => ({ EXPORTER_TYPE: "stdout,nats", NATS_URL: `nats://${address}` }),
      "NATS not ready, retrying",
    ],
    [
      "postgres",
      (address: string) => ({
        EXPORTER_TYPE: "stdout,postgres",
        POSTGRES_URL: `postgres://gpu-serials@${address}/gpus`,
      }),
      "postgres not ready, retrying",
    ],
  ] as const)(
    "reads the nodes and writes stdout before %s's first attempt has even given up, and says the sink is not ready",
    async (exporter, environment, notReady) => {
      cluster = await startSimulatedCluster({ nodes: 2, modelMix: { t4: 2 }, seed: "silent", execLatency: 20 })
      const silent = await startMuteServer()
      sink = silent
      const port = await freePort()
      const running = startGpuSerials(["run", "--kubeconfig", cluster.kubeconfigPath, "--server-port", String(port)], {
        CLUSTER_NAME: "silent",
        SERVER_ADDRESS: "127.0.0.1",
        SHUTDOWN_TIMEOUT: "2s",
        ...environment(silent.url),
      })
      service = running
      await until("stdout has every GPU's record", () => jsonLines(running.stdout()).length >= 2)
      expect(silent.requests()).toBeGreaterThan(0)
      // The sink's first attempt was still waiting for an answer when the other exporter wrote.
      expect(
        jsonLines(
          running
            .stderr()
            .split("\n")
            .filter((line) => line.startsWith("{"))
            .join("\n"),
        ).map((line) => line.msg),
      ).not.toContain(notReady)
      const readyz = async () => {
        const answer = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5_000) })
        return { status: answer.status, body: await answer.text() }
      }
      let ready = { status: 0, body: "" }
      await until("/readyz names the sink", async () => {
        ready = await readyz()
        return ready.body.includes(`${exporter}:`)
      })
      expect(ready.status, ready.body).toBe(503)
      running.child.kill("SIGTERM")
      expect(await running.exited).toEqual({ code: 0, signal: null })
    },
    60_000,
  )
})
