import { Writable } from "node:stream"
import { Exec, KubeConfig, type V1Status } from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { type SimulatedCluster, startSimulatedCluster } from "../src/SimulatedCluster.ts"
import { parseReport } from "./nvidia-smi/SmiReport.ts"

interface ExecResult {
  readonly stdout: string
  readonly stderr: string
  readonly stdoutWrites: number
  readonly status: V1Status | undefined
}

const collector = () => {
  const chunks: Buffer[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk)
      callback()
    },
  })
  return { stream, chunks }
}

describe("exec into device-plugin pods", () => {
  let cluster: SimulatedCluster
  let kubeConfig: KubeConfig

  beforeAll(async () => {
    cluster = await startSimulatedCluster({ nodes: 12, execLatency: 0 })
    kubeConfig = new KubeConfig()
    kubeConfig.loadFromFile(cluster.kubeconfigPath)
  })

  afterAll(async () => {
    await cluster.close()
  })

  const exec = async (nodeName: string, command: string[], container = cluster.container): Promise<ExecResult> => {
    const stdout = collector()
    const stderr = collector()
    let status: V1Status | undefined
    const socket = await new Exec(kubeConfig).exec(
      cluster.namespace,
      cluster.podOf(nodeName) ?? "",
      container,
      command,
      stdout.stream,
      stderr.stream,
      null,
      false,
      (received) => {
        status = received
      },
    )
    await new Promise<void>((resolve) => {
      if (socket.readyState === socket.CLOSED) resolve()
      else socket.on("close", () => resolve())
    })
    return {
      stdout: Buffer.concat(stdout.chunks).toString("utf8"),
      stderr: Buffer.concat(stderr.chunks).toString("utf8"),
      stdoutWrites: stdout.chunks.length,
      status,
    }
  }

  const nodeOf = (model: string) => {
    const name = cluster.nodeNames().find((candidate) => cluster.node(candidate)?.model === model)
    if (name === undefined) throw new Error(`no ${model} node`)
    return name
  }

  it("runs nvidia-smi -q -x and returns the node's GPUs as well-formed XML, in several frames", async () => {
    const nodeName = nodeOf("h100-hgx")
    const result = await exec(nodeName, ["nvidia-smi", "-q", "-x"])
    expect(result.status).toEqual({ metadata: {}, status: "Success" })
    const report = parseReport(result.stdout)
    const expected = cluster.node(nodeName)?.gpus ?? []
    expect(report.gpus).toHaveLength(expected.length)
    expect(report.gpus.map((gpu) => gpu.fields.uuid)).toEqual(expected.map((gpu) => gpu.uuid))
    expect(report.gpus.map((gpu) => gpu.fields.serial)).toEqual(expected.map((gpu) => gpu.serial))
    expect(result.stdoutWrites).toBeGreaterThan(1)
  })

  it("answers --query-gpu with one CSV line per GPU", async () => {
    const nodeName = nodeOf("gb200-nvl72")
    const result = await exec(nodeName, [
      "nvidia-smi",
      "--query-gpu=index,serial,uuid,pci.bus_id",
      "--format=csv,noheader",
    ])
    expect(result.status?.status).toBe("Success")
    const rows = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => line.split(", "))
    const gpus = cluster.node(nodeName)?.gpus ?? []
    expect(rows).toEqual(gpus.map((gpu) => [String(gpu.index), gpu.serial, gpu.uuid, gpu.pciBusId]))
  })

  it("reports a broken driver's exit code 9 in the status frame", async () => {
    const nodeName = nodeOf("t4")
    cluster.setDriverFailure(nodeName, "driver-not-loaded")
    try {
      const result = await exec(nodeName, ["nvidia-smi", "-q", "-x"])
      expect(result.stdout).toMatch(/^NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/)
      expect(result.status).toMatchObject({
        status: "Failure",
        reason: "NonZeroExitCode",
        details: { causes: [{ reason: "ExitCode", message: "9" }] },
      })
    } finally {
      cluster.setDriverFailure(nodeName, undefined)
    }
  })

  it("has no shell: /bin/sh -c nvidia-smi fails to start", async () => {
    const result = await exec(nodeOf("l40s"), ["/bin/sh", "-c", "nvidia-smi -q -x"])
    expect(result.stdout).toBe("")
    expect(result.status).toMatchObject({ status: "Failure", reason: "InternalError", code: 500 })
    expect(result.status?.message).toContain('exec: "/bin/sh": stat /bin/sh: no such file or directory')
  })

  it("refuses a container the pod does not have before upgrading", async () => {
    await expect(exec(nodeOf("l40s"), ["nvidia-smi"], "no-such-container")).rejects.toMatchObject({
      message: expect.stringContaining("400"),
    })
  })

  const rawExec = (nodeName: string, protocols: string[]) =>
    new WebSocket(
      `${cluster.url.replace(/^http/, "ws")}/api/v1/namespaces/${cluster.namespace}/pods/${cluster.podOf(nodeName)}/exec?command=nvidia-smi&command=-L&container=${cluster.container}&stdout=true&stderr=true`,
      protocols,
      { headers: { Authorization: `Bearer ${cluster.token}` }, ca: cluster.certificateAuthority ?? "" },
    )

  it("speaks v4.channel.k8s.io to a client that does not offer v5", async () => {
    const nodeName = nodeOf("a100-mig")
    const socket = rawExec(nodeName, ["v4.channel.k8s.io", "channel.k8s.io"])
    const frames: Buffer[] = []
    socket.on("message", (data: Buffer) => frames.push(data))
    const closeCode = await new Promise<number>((resolve, reject) => {
      socket.on("close", (code) => resolve(code))
      socket.on("error", reject)
    })
    expect(socket.protocol).toBe("v4.channel.k8s.io")
    expect(closeCode).toBe(1000)
    const stdout = Buffer.concat(frames.filter((frame) => frame[0] === 1).map((frame) => frame.subarray(1))).toString()
    for (const gpu of cluster.node(nodeName)?.gpus ?? []) expect(stdout).toContain(`(UUID: ${gpu.uuid})`)
    const status = frames
      .filter((frame) => frame[0] === 3 && frame.length > 1)
      .map((frame) => JSON.parse(frame.subarray(1).toString()))
    expect(status).toEqual([{ metadata: {}, status: "Success" }])
  })

  it("refuses an upgrade that offers no channel protocol it speaks", async () => {
    const socket = rawExec(nodeOf("a100-mig"), ["v3.channel.k8s.io"])
    const statusCode = await new Promise<number>((resolve) => {
      socket.on("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0))
      socket.on("error", () => {})
    })
    expect(statusCode).toBe(400)
  })
})
