import { connect as connectTcp, type Socket } from "node:net"
import { Writable } from "node:stream"
import { connect as connectTls, type TLSSocket } from "node:tls"
import { ApiException, CoreV1Api, Exec, KubeConfig, type V1Status, Watch } from "@kubernetes/client-node"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type SimulatedCluster, startSimulatedCluster } from "../src/SimulatedCluster.ts"
import { eventually } from "./Eventually.ts"
import { parseReport } from "./nvidia-smi/SmiReport.ts"

describe("fault injection", () => {
  let cluster: SimulatedCluster
  let kubeConfig: KubeConfig
  let core: CoreV1Api

  beforeAll(async () => {
    cluster = await startSimulatedCluster({
      nodes: 10,
      execLatency: 0,
      podTimings: { startMs: 10, readyMs: 10, terminationMs: 10 },
    })
    kubeConfig = new KubeConfig()
    kubeConfig.loadFromFile(cluster.kubeconfigPath)
    core = kubeConfig.makeApiClient(CoreV1Api)
  })

  afterEach(() => cluster.faults.clear())

  afterAll(async () => {
    await cluster.close()
  })

  const nodeOf = (model: string) => {
    const name = cluster.nodeNames().find((candidate) => cluster.node(candidate)?.model === model)
    if (name === undefined) throw new Error(`no ${model} node`)
    return name
  }

  /** Runs an exec and waits for the socket to close; `cancel` lets a test close it itself. */
  const startExec = async (nodeName: string, command: string[]) => {
    const chunks: Buffer[] = []
    let status: V1Status | undefined
    const socket = await new Exec(kubeConfig).exec(
      cluster.namespace,
      cluster.podOf(nodeName) ?? "",
      cluster.container,
      command,
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          chunks.push(chunk)
          callback()
        },
      }),
      null,
      null,
      false,
      (received) => {
        status = received
      },
    )
    const closed = new Promise<void>((resolve) => {
      if (socket.readyState === socket.CLOSED) resolve()
      else socket.on("close", () => resolve())
    })
    return {
      closed,
      cancel: () => socket.close(),
      stdout: () => Buffer.concat(chunks),
      status: () => status,
    }
  }

  const exec = async (nodeName: string, command: string[]) => {
    const running = await startExec(nodeName, command)
    await running.closed
    return { stdout: running.stdout(), status: running.status() }
  }

  it("answers 429 with Retry-After once, then serves again", async () => {
    cluster.faults.inject({ kind: "throttle", retryAfterSeconds: 3, match: { resource: "pods", verb: "list" } })
    const refused = await core.listNamespacedPod({ namespace: cluster.namespace }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(ApiException)
    const exception = refused as ApiException<string>
    expect(exception.code).toBe(429)
    expect(exception.headers["retry-after"]).toBe("3")
    expect(JSON.parse(exception.body)).toMatchObject({ reason: "TooManyRequests", details: { retryAfterSeconds: 3 } })
    expect((await core.listNamespacedPod({ namespace: cluster.namespace })).items).toHaveLength(10)
  })

  it("answers server errors, scripted or at a rate", async () => {
    const name = cluster.nodeNames()[0] ?? ""
    cluster.faults.inject({ kind: "server-error", status: 503, match: { resource: "nodes", name }, times: 2 })
    await expect(core.readNode({ name })).rejects.toMatchObject({ code: 503 })
    await expect(core.readNode({ name })).rejects.toMatchObject({ code: 503 })
    expect((await core.readNode({ name })).metadata?.name).toBe(name)
    cluster.faults.setRates({ serverError: 1 })
    await expect(core.listNode()).rejects.toSatisfy((error: unknown) =>
      [500, 503].includes((error as ApiException<unknown>).code),
    )
  })

  it("hangs an exec until the client gives up", async () => {
    const nodeName = nodeOf("h100-hgx")
    cluster.faults.inject({ kind: "exec-hang", node: nodeName })
    const running = await startExec(nodeName, ["nvidia-smi", "-q", "-x"])
    await eventually("the hanging session to be open", () => cluster.stats().execSessionsOpen === 1)
    running.cancel()
    await running.closed
    expect(running.status()).toBeUndefined()
    expect(running.stdout()).toHaveLength(0)
    await eventually("the server to drop the session", () => cluster.stats().execSessionsOpen === 0)
  })

  it("survives a client resetting the connection of an exec upgrade it holds", async () => {
    const nodeName = nodeOf("h100-hgx")
    const pod = cluster.podOf(nodeName) ?? ""
    cluster.faults.inject({ kind: "hang", match: { subresource: "exec" }, times: 1 })
    const requestsBefore = cluster.stats().requests
    const address = new URL(cluster.url)
    const tcp = await new Promise<Socket>((resolve, reject) => {
      const connected = connectTcp({ host: address.hostname, port: Number(address.port) }, () => resolve(connected))
      connected.once("error", reject)
    })
    tcp.on("error", () => undefined)
    const socket = await new Promise<TLSSocket>((resolve, reject) => {
      const secured = connectTls({ socket: tcp, ca: cluster.certificateAuthority ?? "" }, () => resolve(secured))
      secured.once("error", reject)
    })
    socket.on("error", () => undefined)
    socket.write(
      `GET /api/v1/namespaces/${cluster.namespace}/pods/${pod}/exec?command=nvidia-smi&stdout=true HTTP/1.1\r\n` +
        `Host: ${address.host}\r\nAuthorization: Bearer ${cluster.token}\r\nConnection: Upgrade\r\n` +
        "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
        "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n",
    )
    await eventually("the upgrade to be held", () => cluster.stats().requests > requestsBefore)
    tcp.resetAndDestroy()
    await new Promise((resolve) => setTimeout(resolve, 100))
    const listed = await core.listNamespacedPod({ namespace: cluster.namespace })
    expect(listed.items.length).toBeGreaterThan(0)
  })

  it("truncates output while still reporting success", async () => {
    const nodeName = nodeOf("h100-hgx")
    cluster.faults.inject({ kind: "exec-truncate", node: nodeName })
    const result = await exec(nodeName, ["nvidia-smi", "-q", "-x"])
    expect(result.status?.status).toBe("Success")
    expect(result.stdout.length).toBeGreaterThan(0)
    expect(() => parseReport(result.stdout.toString("utf8"))).toThrow()
  })

  it("returns garbage instead of the report", async () => {
    const nodeName = nodeOf("l40s")
    cluster.faults.inject({ kind: "exec-garbage", node: nodeName })
    const result = await exec(nodeName, ["nvidia-smi", "-q", "-x"])
    expect(result.status?.status).toBe("Success")
    expect(() => parseReport(result.stdout.toString("utf8"))).toThrow()
  })

  it("exits non-zero, scripted or at a rate", async () => {
    const nodeName = nodeOf("t4")
    cluster.faults.inject({ kind: "exec-exit", exitCode: 15, node: nodeName })
    expect((await exec(nodeName, ["nvidia-smi", "-L"])).status).toMatchObject({
      reason: "NonZeroExitCode",
      details: { causes: [{ reason: "ExitCode", message: "15" }] },
    })
    cluster.faults.setRates({ execNonZeroExit: 1 })
    expect((await exec(nodeName, ["nvidia-smi", "-L"])).status?.reason).toBe("NonZeroExitCode")
    cluster.faults.clear()
    expect((await exec(nodeName, ["nvidia-smi", "-L"])).status?.status).toBe("Success")
  })

  const openWatch = async () => {
    const listed = await core.listNamespacedPod({ namespace: cluster.namespace })
    const events: string[] = []
    let ended = false
    let endError: unknown
    const controller = await new Watch(kubeConfig).watch(
      `/api/v1/namespaces/${cluster.namespace}/pods`,
      { resourceVersion: listed.metadata?.resourceVersion ?? "" },
      (type, object: { metadata?: { name?: string } }) => events.push(`${type} ${object.metadata?.name}`),
      (error) => {
        ended = true
        endError = error
      },
    )
    await eventually("the watch to be registered", () => cluster.stats().watchesOpen > 0)
    return { events, ended: () => ended, endError: () => endError, stop: () => controller.abort() }
  }

  it("drops open watches with a connection reset", async () => {
    const watch = await openWatch()
    expect(cluster.faults.dropWatches("pods")).toBe(1)
    await eventually("the client to notice", watch.ended)
    expect(watch.endError()).toBeTruthy()
  })

  it("stalls open watches: connected, but silent", async () => {
    const watch = await openWatch()
    expect(cluster.faults.stallWatches("pods")).toBe(1)
    const old = cluster.restartPod(cluster.nodeNames()[1] ?? "")
    await eventually("the pod to be gone", () => cluster.podOf(cluster.nodeNames()[1] ?? "") !== old)
    const fresh = await openWatch()
    try {
      const replacement = cluster.restartPod(cluster.nodeNames()[2] ?? "")
      await eventually("a live watch to see a change", () => fresh.events.includes(`DELETED ${replacement}`))
      expect(watch.events).toEqual([])
      expect(watch.ended()).toBe(false)
    } finally {
      watch.stop()
      fresh.stop()
    }
  })

  it("moves a GPU between nodes so that the next reading shows it on the other node", async () => {
    const [first, second] = cluster.nodeNames().filter((name) => cluster.node(name)?.model === "h100-hgx")
    if (first === undefined || second === undefined) throw new Error("two H100 nodes expected")
    const before = cluster.node(first)?.gpus[2]?.uuid
    const moved = cluster.swapGpus(first, second, { index: 2, restartPods: false })
    expect(moved).toContain(before)
    const report = parseReport((await exec(second, ["nvidia-smi", "-q", "-x"])).stdout.toString("utf8"))
    expect(report.gpus.map((gpu) => gpu.fields.uuid)).toContain(before)
    const left = parseReport((await exec(first, ["nvidia-smi", "-q", "-x"])).stdout.toString("utf8"))
    expect(left.gpus.map((gpu) => gpu.fields.uuid)).not.toContain(before)
  })
})
