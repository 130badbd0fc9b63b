import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { afterEach, describe, expect, it } from "vitest"
import { freePort } from "../../src/health/FreePort.ts"
import { jsonLines, type RunningCli, startGpuSerials } from "./GpuSerialsCli.ts"

/** An OTLP collector that takes every request and never answers, as one stuck behind a dead network. */
interface HungCollector {
  readonly url: string
  readonly requests: () => number
  readonly close: () => Promise<void>
}

const startHungCollector = async (): Promise<HungCollector> => {
  const held: Array<IncomingMessage> = []
  const server: Server = createServer((request) => {
    held.push(request)
    request.resume()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => held.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const until = async (what: string, condition: () => boolean, timeoutMs = 20_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

let cluster: SimulatedCluster | undefined
let collector: HungCollector | undefined
let service: RunningCli | undefined

afterEach(async () => {
  if (service !== undefined && service.child.exitCode === null && service.child.signalCode === null) {
    service.child.kill("SIGKILL")
    await service.exited
  }
  await collector?.close()
  await cluster?.close()
  service = undefined
  collector = undefined
  cluster = undefined
})

/**
 * `run` against a cluster of 4 nodes whose first two answer no exec (nvidia-smi hangs until TIMEOUT),
 * exporting over OTLP to a collector that never answers; resolves once the readings of the other two
 * nodes are stuck in the exporter and the hung execs are open.
 */
const runWithHungExecsAndCollector = async (shutdownTimeout: string): Promise<RunningCli> => {
  cluster = await startSimulatedCluster({
    nodes: 4,
    modelMix: { "h100-hgx": 2, t4: 2 },
    seed: "shutdown",
    execLatency: 20,
  })
  const [first, second] = cluster.nodeNames()
  for (const node of [first, second]) cluster.faults.inject({ kind: "exec-hang", node, times: 100 })
  collector = await startHungCollector()
  const running = startGpuSerials(
    ["run", "--kubeconfig", cluster.kubeconfigPath, "--server-port", String(await freePort())],
    {
      CLUSTER_NAME: "shutdown",
      EXPORTER_TYPE: "otlp",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTLP_METRICS_INTERVAL: "0",
      // A pod deadline far beyond the test's own: exiting at all shows the hung execs were not waited for.
      TIMEOUT: "1h",
      SHUTDOWN_TIMEOUT: shutdownTimeout,
      SERVER_ADDRESS: "127.0.0.1",
      WORKERS: "4",
    },
  )
  service = running
  await running.logged("gpu-serials running")
  const sim = cluster
  const stuck = collector
  await until("the collector holds a request", () => stuck.requests() > 0)
  await until("both hung execs are open", () => sim.stats().execSessionsOpen >= 2)
  return running
}

describe("gpu-serials run: shutdown within the grace period", () => {
  it("abandons hung execs, gives the exporter the rest of SHUTDOWN_TIMEOUT, logs what it could not write and exits 0 without waiting for TIMEOUT", async () => {
    const running = await runWithHungExecsAndCollector("4s")
    running.child.kill("SIGTERM")
    const exit = await running.exited

    expect(exit).toEqual({ code: 0, signal: null })
    const logs = jsonLines(running.stderr())
    expect(logs.find((line) => line.msg === "gpu-serials shutting down")).toMatchObject({ shutdownTimeout: "4s" })
    const unwritten = logs.filter((line) => line.msg === "exporter stopped with records not written")
    expect(unwritten).toHaveLength(1)
    expect(unwritten[0]).toMatchObject({ level: "warn", exporter: "otlp" })
    expect(unwritten[0]?.dropped).toBeGreaterThan(0)
    expect(JSON.stringify(unwritten[0])).not.toMatch(/GPU-[0-9a-f]{8}/)
  }, 60_000)

  it.each([
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const)(
    "a second %s during shutdown exits at once with %i, logging one line",
    async (signal, code) => {
      const running = await runWithHungExecsAndCollector("20s")
      running.child.kill(signal)
      await running.logged("gpu-serials shutting down")
      running.child.kill(signal)
      const exit = await running.exited

      expect(exit).toEqual({ code, signal: null })
      const second = jsonLines(running.stderr()).filter(
        (line) => line.msg === "second signal during shutdown, exiting at once",
      )
      expect(second).toEqual([expect.objectContaining({ level: "error", signal, exitCode: code })])
    },
    60_000,
  )
})
