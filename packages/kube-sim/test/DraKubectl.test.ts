import { spawn } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { type SimulatedCluster, startSimulatedCluster } from "../src/SimulatedCluster.ts"

const kubectlPath = "/usr/bin/kubectl"

interface KubectlResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

interface SliceYaml {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: { readonly name: string }
  readonly spec: {
    readonly driver: string
    readonly nodeName: string
    readonly pool: { readonly name: string; readonly generation: number; readonly resourceSliceCount: number }
    readonly devices: ReadonlyArray<{
      readonly name: string
      readonly attributes: Record<string, { readonly string?: string; readonly version?: string }>
    }>
  }
}

describe("kubectl against a simulated cluster with the DRA driver", () => {
  let cluster: SimulatedCluster
  let home: string

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), "kubectl-home-"))
    cluster = await startSimulatedCluster({ dra: true, nodes: 8, execLatency: 0, processStartMs: 100 })
  })

  afterAll(async () => {
    await cluster.close()
    await rm(home, { recursive: true, force: true })
  })

  /** A node whose driver is broken when its plugin starts publishes no slice: the plugin cannot enumerate its GPUs. */
  const publishing = () => cluster.nodeNames().filter((node) => cluster.node(node)?.driverFailure === undefined)

  const kubectl = (...args: string[]) =>
    new Promise<KubectlResult>((resolve, reject) => {
      const child = spawn(
        kubectlPath,
        [
          "--kubeconfig",
          cluster.kubeconfigPath,
          "--cache-dir",
          join(home, "cache"),
          "--request-timeout",
          "20s",
          ...args,
        ],
        { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdio: ["ignore", "pipe", "pipe"] },
      )
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8")
      })
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8")
      })
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        reject(new Error(`kubectl ${args.join(" ")} did not finish: ${stderr}`))
      }, 25_000)
      child.on("close", (code) => {
        clearTimeout(timer)
        resolve({ code, stdout, stderr })
      })
    })

  it("has a broken-driver node, whose plugin publishes no slice", () => {
    expect(publishing().length).toBeLessThan(cluster.nodeNames().length)
    for (const node of cluster.nodeNames())
      if (!publishing().includes(node)) expect(cluster.sliceOf(node)).toBeUndefined()
  })

  it("get resourceslices prints NAME, NODE, DRIVER, POOL, AGE, one row per GPU node", async () => {
    const result = await kubectl("get", "resourceslices")
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    const [header, ...rows] = result.stdout.trimEnd().split("\n")
    expect(header).toMatch(/^NAME\s+NODE\s+DRIVER\s+POOL\s+AGE$/)
    expect(rows).toHaveLength(publishing().length)
    for (const node of publishing())
      expect(result.stdout).toMatch(
        new RegExp(`${cluster.sliceOf(node)}\\s+${node}\\s+gpu\\.nvidia\\.com\\s+${node}\\s+`),
      )
  })

  it("get resourceslices --field-selector spec.driver=gpu.nvidia.com -o yaml gives the driver's slices", async () => {
    const result = await kubectl(
      "get",
      "resourceslices",
      "--field-selector",
      "spec.driver=gpu.nvidia.com",
      "-o",
      "yaml",
    )
    expect(result.code).toBe(0)
    const list = parse(result.stdout) as { kind: string; items: SliceYaml[] }
    expect(list.kind).toBe("List")
    expect(list.items.map((slice) => slice.spec.nodeName).sort()).toEqual(publishing())
    for (const slice of list.items) {
      expect(slice.apiVersion).toBe("resource.k8s.io/v1")
      expect(slice.kind).toBe("ResourceSlice")
      expect(slice.spec.pool).toEqual({ name: slice.spec.nodeName, generation: 1, resourceSliceCount: 1 })
      const uuids = new Set(
        slice.spec.devices.map((device) => device.attributes.parentUUID?.string ?? device.attributes.uuid?.string),
      )
      expect([...uuids].sort()).toEqual((cluster.node(slice.spec.nodeName)?.gpus ?? []).map((gpu) => gpu.uuid).sort())
    }
  })

  it("get resourceslices --field-selector for another driver lists none", async () => {
    const result = await kubectl("get", "resourceslices", "--field-selector", "spec.driver=compute-domain.nvidia.com")
    expect(result.code).toBe(0)
    expect(result.stderr).toContain("No resources found")
  })

  it("exec in container gpus runs nvidia-smi from the driver root with the library preloaded", async () => {
    const node = publishing()[0] ?? ""
    const result = await kubectl(
      "exec",
      "-n",
      cluster.namespace,
      cluster.podOf(node) ?? "",
      "-c",
      "gpus",
      "--",
      "env",
      "LD_PRELOAD=/driver-root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
      "/driver-root/usr/bin/nvidia-smi",
      "--query-gpu=uuid",
      "--format=csv,noheader",
    )
    expect(result.code).toBe(0)
    expect(result.stdout.trimEnd().split("\n")).toEqual((cluster.node(node)?.gpus ?? []).map((gpu) => gpu.uuid))
  })
})
