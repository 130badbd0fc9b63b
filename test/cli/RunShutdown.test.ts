import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { afterEach, describe, expect, it } from "vitest"
import { freePort } from "../../src/health/FreePort.ts"
import { jsonLines, type RunningCli, startGpuSerials } from "./GpuSerialsCli.ts"
import { type HungCollector, startHungCollector, startMuteServer } from "./SilentSinks.ts"

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

  // Every exporter's own deadlines are set far past the test's: exiting at all shows none was waited out.
  it.each([
    [
      "otlp, with its metrics push",
      startHungCollector,
      (sink: string) => ({
        EXPORTER_TYPE: "otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT: sink,
        OTEL_EXPORTER_OTLP_TIMEOUT: "1h",
        OTLP_METRICS_INTERVAL: "1s",
      }),
    ],
    [
      "http",
      startHungCollector,
      (sink: string) => ({ EXPORTER_TYPE: "http", HTTP_ENDPOINT: `${sink}/gpus`, HTTP_TIMEOUT: "1h" }),
    ],
    ["nats", startMuteServer, (sink: string) => ({ EXPORTER_TYPE: "nats", NATS_URL: `nats://${sink}` })],
    [
      "postgres",
      startMuteServer,
      (sink: string) => ({ EXPORTER_TYPE: "postgres", POSTGRES_URL: `postgres://gpu-serials@${sink}/gpus` }),
    ],
  ] as const)(
    "exits 0 within SHUTDOWN_TIMEOUT when the %s sink takes connections and never answers",
    async (_exporter, startSink, environment) => {
      cluster = await startSimulatedCluster({ nodes: 2, modelMix: { t4: 2 }, seed: "mute", execLatency: 20 })
      const sink = await startSink()
      collector = sink
      const running = startGpuSerials(
        ["run", "--kubeconfig", cluster.kubeconfigPath, "--server-port", String(await freePort())],
        {
          CLUSTER_NAME: "mute",
          SHUTDOWN_TIMEOUT: "3s",
          SERVER_ADDRESS: "127.0.0.1",
          ...environment(sink.url),
        },
      )
      service = running
      await until("the sink holds a connection", () => sink.requests() > 0)
      await running.logged("gpu-serials running")
      running.child.kill("SIGTERM")
      const exit = await running.exited

      expect(exit, running.stderr()).toEqual({ code: 0, signal: null })
      const logs = jsonLines(running.stderr())
      const shutdownLine = logs.findIndex((line) => line.msg === "gpu-serials shutting down")
      expect(shutdownLine).toBeGreaterThanOrEqual(0)
      // Nothing the sink made the service wait for is reported after the process was done.
      expect(
        logs
          .slice(shutdownLine)
          .filter((line) => line.msg === "OTLP metrics push failed; retried at the next interval"),
      ).toEqual([])
    },
    60_000,
  )

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
