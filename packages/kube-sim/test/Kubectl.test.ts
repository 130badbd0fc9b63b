import { type ChildProcess, spawn } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CoordinationV1Api, KubeConfig, V1MicroTime } from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse, stringify } from "yaml"
import { type SimulatedCluster, startSimulatedCluster } from "../src/SimulatedCluster.ts"
import { eventually } from "./Eventually.ts"
import { parseReport } from "./nvidia-smi/SmiReport.ts"

const kubectlPath = "/usr/bin/kubectl"

interface KubectlResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

describe("kubectl against the simulated cluster", () => {
  let cluster: SimulatedCluster
  let home: string
  const running = new Set<ChildProcess>()

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), "kubectl-home-"))
    cluster = await startSimulatedCluster({
      nodes: 10,
      execLatency: 0,
      // kubectl discards frames that reach it before it has created its streams after the upgrade.
      processStartMs: 100,
      podTimings: { startMs: 50, readyMs: 50, terminationMs: 50 },
    })
  })

  afterAll(async () => {
    for (const child of running) child.kill("SIGKILL")
    await cluster.close()
    await rm(home, { recursive: true, force: true })
  })

  const start = (args: string[]) => {
    const child = spawn(
      kubectlPath,
      ["--kubeconfig", cluster.kubeconfigPath, "--cache-dir", join(home, "cache"), "--request-timeout", "20s", ...args],
      { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdio: ["ignore", "pipe", "pipe"] },
    )
    running.add(child)
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    const done = new Promise<KubectlResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        reject(new Error(`kubectl ${args.join(" ")} did not finish: ${stderr}`))
      }, 25_000)
      child.on("close", (code) => {
        clearTimeout(timer)
        running.delete(child)
        resolve({ code, stdout, stderr })
      })
    })
    return { child, done, stdout: () => stdout }
  }

  const kubectl = (...args: string[]) => start(args).done

  /** `kubectl exec` of `command` in the device-plugin container of `node`. */
  const kubectlExec = (node: string, ...command: string[]) =>
    kubectl("exec", "-n", cluster.namespace, cluster.podOf(node) ?? "", "-c", cluster.container, "--", ...command)

  const nodeOf = (model: string) => {
    const name = cluster.nodeNames().find((candidate) => cluster.node(candidate)?.model === model)
    if (name === undefined) throw new Error(`no ${model} node`)
    return name
  }

  it("speaks HTTPS, verified against the kubeconfig's CA, and a kubeconfig with another CA is refused", async () => {
    expect(cluster.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
    const handshakesBefore = cluster.stats().tlsHandshakes
    const trusted = await kubectl("get", "nodes", "-o", "name")
    expect(trusted.stderr).toBe("")
    expect(trusted.code).toBe(0)
    expect(cluster.stats().tlsHandshakes).toBeGreaterThan(handshakesBefore)
    const other = await startSimulatedCluster({ nodes: 1, execLatency: 0 })
    try {
      const kubeconfig = parse(await readFile(cluster.kubeconfigPath, "utf8")) as {
        clusters: Array<{ cluster: Record<string, unknown> }>
      }
      const entry = kubeconfig.clusters[0]
      if (entry === undefined) throw new Error("the kubeconfig has no cluster")
      entry.cluster["certificate-authority-data"] = Buffer.from(other.certificateAuthority ?? "").toString("base64")
      const foreign = join(home, "kubeconfig-other-ca")
      await writeFile(foreign, stringify(kubeconfig), { mode: 0o600 })
      const refused = await kubectl("--kubeconfig", foreign, "get", "nodes", "-o", "name")
      expect(refused.code).not.toBe(0)
      expect(refused.stderr).toContain("x509: certificate signed by unknown authority")
    } finally {
      await other.close()
    }
  })

  it("get pods lists every device-plugin pod", async () => {
    const result = await kubectl("get", "pods", "-n", cluster.namespace)
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    expect(result.stdout.split("\n")[0]).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/)
    for (const node of cluster.nodeNames())
      expect(result.stdout).toMatch(new RegExp(`${cluster.podOf(node)}\\s+2/2\\s+Running`))
  })

  it("get pods -w prints a newly created pod", async () => {
    const watch = start(["get", "pods", "-n", cluster.namespace, "-w"])
    try {
      const node = cluster.nodeNames()[0] ?? ""
      const old = cluster.podOf(node) ?? ""
      await eventually("the initial list", () => watch.stdout().includes(old))
      cluster.restartPod(node)
      await eventually("a replacement pod", () => cluster.podOf(node) !== undefined && cluster.podOf(node) !== old)
      const replacement = cluster.podOf(node) ?? ""
      await eventually("kubectl to print the new pod", () => watch.stdout().includes(replacement), 15_000)
      await eventually("kubectl to print it running", () =>
        new RegExp(`${replacement}\\s+2/2\\s+Running`).test(watch.stdout()),
      )
    } finally {
      watch.child.kill("SIGTERM")
      await watch.done
    }
  })

  it("get nodes -o yaml shows the providerIDs", async () => {
    const result = await kubectl("get", "nodes", "-o", "yaml")
    expect(result.code).toBe(0)
    const list = parse(result.stdout) as {
      kind: string
      items: Array<{ metadata: { name: string }; spec: { providerID?: string } }>
    }
    expect(list.kind).toBe("List")
    const byName = new Map(list.items.map((item) => [item.metadata.name, item.spec.providerID ?? ""]))
    for (const node of cluster.nodeNames()) expect(byName.get(node)).toBe(cluster.node(node)?.providerId)
    expect([...byName.values()].some((providerId) => providerId.startsWith("aws:///"))).toBe(true)
  })

  it("get lease shows the holder, as a table and as YAML", async () => {
    const config = new KubeConfig()
    config.loadFromFile(cluster.kubeconfigPath)
    await config.makeApiClient(CoordinationV1Api).createNamespacedLease({
      namespace: "gpu-serials",
      body: {
        metadata: { name: "gpu-serials-leader" },
        spec: {
          holderIdentity: "gpu-serials-7d9f-abcde",
          leaseDurationSeconds: 15,
          acquireTime: new V1MicroTime("2026-01-02T03:04:05.123Z"),
          renewTime: new V1MicroTime("2026-01-02T03:04:07.654Z"),
          leaseTransitions: 3,
        },
      },
    })
    const table = await kubectl("get", "lease", "-n", "gpu-serials")
    expect(table.code).toBe(0)
    expect(table.stdout.split("\n")[0]).toMatch(/^NAME\s+HOLDER\s+AGE$/)
    expect(table.stdout).toMatch(/gpu-serials-leader\s+gpu-serials-7d9f-abcde\s/)
    const yaml = await kubectl("get", "lease", "-n", "gpu-serials", "gpu-serials-leader", "-o", "yaml")
    expect(yaml.code).toBe(0)
    expect(parse(yaml.stdout)).toMatchObject({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "gpu-serials-leader", namespace: "gpu-serials" },
      spec: {
        holderIdentity: "gpu-serials-7d9f-abcde",
        leaseDurationSeconds: 15,
        leaseTransitions: 3,
        acquireTime: "2026-01-02T03:04:05.123000Z",
      },
    })
  })

  it("label node adds a label that get then shows", async () => {
    const node = cluster.nodeNames()[1] ?? ""
    const labelled = await kubectl("label", "node", node, "foo=bar")
    expect(labelled.stdout.trim()).toBe(`node/${node} labeled`)
    const shown = await kubectl("get", "node", node, "-o", "jsonpath={.metadata.labels.foo}")
    expect(shown.stdout).toBe("bar")
    const listed = await kubectl("get", "nodes", "-l", "foo=bar", "-o", "name")
    expect(listed.stdout.trim()).toBe(`node/${node}`)
  })

  it("exec nvidia-smi -q -x prints the XML report and exits 0", async () => {
    const node = nodeOf("h100-hgx")
    const result = await kubectlExec(node, "nvidia-smi", "-q", "-x")
    expect(result.code).toBe(0)
    const report = parseReport(result.stdout)
    expect(report.gpus.map((gpu) => gpu.fields.uuid)).toEqual(cluster.node(node)?.gpus.map((gpu) => gpu.uuid))
  })

  it("exec on a node with a broken driver exits with nvidia-smi's exit code", async () => {
    const node = nodeOf("l40s")
    cluster.setDriverFailure(node, "driver-not-loaded")
    try {
      const result = await kubectlExec(node, "nvidia-smi", "-q", "-x")
      expect(result.code).toBe(9)
      expect(result.stdout).toContain("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")
      expect(result.stderr).toContain("command terminated with exit code 9")
    } finally {
      cluster.setDriverFailure(node, undefined)
    }
  })

  it("exec through a shell fails: the container has none", async () => {
    const node = nodeOf("t4")
    const result = await kubectlExec(node, "/bin/sh", "-c", "nvidia-smi")
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain("stat /bin/sh: no such file or directory")
  })
})
