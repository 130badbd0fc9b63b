import { spawn } from "node:child_process"
import * as https from "node:https"
import { createInterface } from "node:readline"
import { Writable } from "node:stream"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import type { ClusterAccess } from "../src/kubeclient/clientcmd/ClusterAccess.ts"
import { loadClusterAccess } from "../src/kubeclient/clientcmd/KubeconfigLoader.ts"
import { openExecSession } from "../src/kubeclient/remotecommand/ExecSession.ts"
import { makeKubeTransport } from "../src/kubeclient/rest/KubeTransport.ts"
import { median, minMedian } from "./Sampling.ts"

/** Execs per way of connecting in one run: enough that the per-exec CPU is not a few timer ticks. */
const execsPerRun = 300

const simulatorMain = fileURLToPath(new URL("../packages/kube-sim/src/main.ts", import.meta.url))

/** How an exec's WebSocket upgrade reaches the API server. */
interface Connecting {
  readonly name: string
  /** The access the execs use: its agent decides whether a session is resumed or a connection reused. */
  readonly access: (cluster: ClusterAccess) => ClusterAccess
  /** A REST call before each exec (not measured), leaving an idle connection for it. */
  readonly restBefore: boolean
}

const withAgent = (cluster: ClusterAccess, agent: () => https.Agent): ClusterAccess => ({
  server: cluster.server,
  applyTo: async (options) => {
    await cluster.applyTo(options)
    options.agent = agent()
  },
})

const connectings: ReadonlyArray<Connecting> = [
  {
    name: "full handshake (no session kept)",
    // A fresh agent for every exec has no session to offer: every upgrade is a full TLS 1.3 handshake.
    access: (cluster) => withAgent(cluster, () => new https.Agent({ keepAlive: false })),
    restBefore: false,
  },
  {
    name: "resumed session (TLS 1.3 ticket)",
    access: (cluster) => {
      const agent = new https.Agent({ keepAlive: false })
      return withAgent(cluster, () => agent)
    },
    restBefore: false,
  },
  {
    name: "idle keep-alive connection",
    access: (cluster) => cluster,
    restBefore: true,
  },
]

interface ExecCost {
  /** CPU of this process (user + system) per exec, in milliseconds. */
  readonly cpuMs: number
  /** Wall time per exec, upgrade to status, in milliseconds. */
  readonly wallMs: number
}

const discard = () => new Writable({ write: (_chunk, _encoding, done) => done() })

const startSimulator = async () => {
  const child = spawn(process.execPath, [simulatorMain, "--nodes", "1", "--exec-latency", "0ms"], {
    stdio: ["ignore", "pipe", "inherit"],
  })
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve)
    child.once("exit", () => reject(new Error("the simulator exited before it served")))
  })
  const started = JSON.parse(line) as { kubeconfigPath: string; namespace: string; container: string }
  return { child, started }
}

/** Runs `execsPerRun` execs of `nvidia-smi -L` one after another and takes their cost. */
const measure = async (
  connecting: Connecting,
  base: ClusterAccess,
  pod: { readonly namespace: string; readonly name: string; readonly container: string },
): Promise<ExecCost> => {
  const transport = makeKubeTransport(connecting.access(base))
  const execOnce = async (): Promise<void> => {
    const socket = await openExecSession(
      transport,
      {
        namespace: pod.namespace,
        pod: pod.name,
        container: pod.container,
        argv: ["nvidia-smi", "-L"],
        stdout: discard(),
        stderr: discard(),
        onStatus: () => undefined,
      },
      10_000,
      AbortSignal.timeout(10_000),
    )
    await new Promise<void>((resolve) => socket.once("close", () => resolve()))
  }
  const rest = async (): Promise<void> => {
    const response = await transport.open({ method: "GET", path: "/version" }, AbortSignal.timeout(10_000))
    response.resume()
    await new Promise<void>((resolve) => response.once("end", () => resolve()))
    // The connection joins the agent's idle ones once the response has ended.
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
  await execOnce()
  let cpuMicros = 0
  let wallMs = 0
  for (let exec = 0; exec < execsPerRun; exec++) {
    if (connecting.restBefore) await rest()
    const cpu = process.cpuUsage()
    const start = performance.now()
    await execOnce()
    wallMs += performance.now() - start
    const used = process.cpuUsage(cpu)
    cpuMicros += used.user + used.system
  }
  return { cpuMs: cpuMicros / 1000 / execsPerRun, wallMs: wallMs / execsPerRun }
}

/**
 * What the TLS of an exec costs the service: execs of `nvidia-smi -L` (no run time) against the simulated
 * API server in a process of its own, over HTTPS, with a full handshake each, with the session of the
 * previous one resumed, and on a connection a REST call left idle. CPU is this process's only.
 */
export const tlsHandshakeBench = async (runs: number): Promise<ReadonlyArray<string>> => {
  const { child, started } = await startSimulator()
  try {
    const { access } = await Effect.runPromise(loadClusterAccess(started.kubeconfigPath))
    const probe = makeKubeTransport(access)
    const listed = await probe.open(
      { method: "GET", path: `/api/v1/namespaces/${started.namespace}/pods` },
      AbortSignal.timeout(10_000),
    )
    const chunks: Array<Buffer> = []
    for await (const chunk of listed) chunks.push(chunk as Buffer)
    const pods = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { items: Array<{ metadata: { name: string } }> }
    const name = pods.items[0]?.metadata.name
    if (name === undefined) throw new Error("the simulated cluster has no device-plugin pod")
    const pod = { namespace: started.namespace, name, container: started.container }
    const lines = [
      `TLS per exec (${execsPerRun} execs of nvidia-smi -L a run, ${runs} run${runs === 1 ? "" : "s"}, min / median):`,
    ]
    const costs = new Map<string, Array<ExecCost>>()
    for (let run = 0; run < runs; run++)
      for (const connecting of connectings) {
        const cost = await measure(connecting, access, pod)
        costs.set(connecting.name, [...(costs.get(connecting.name) ?? []), cost])
      }
    const full = median((costs.get(connectings[0]?.name ?? "") ?? []).map((cost) => cost.cpuMs))
    for (const connecting of connectings) {
      const measured = costs.get(connecting.name) ?? []
      const cpu = measured.map((cost) => cost.cpuMs)
      lines.push(
        `  ${connecting.name.padEnd(36)} CPU ${minMedian(cpu, 3)} ms, wall ${minMedian(
          measured.map((cost) => cost.wallMs),
          3,
        )} ms, ${(median(cpu) / full).toFixed(2)}× the full handshake's CPU`,
      )
    }
    return lines
  } finally {
    child.kill("SIGTERM")
  }
}
