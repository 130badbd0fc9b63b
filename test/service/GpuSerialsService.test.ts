import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { afterEach, describe, expect, it } from "vitest"
import { parseSamples, samplesOf } from "../metrics/PrometheusText.ts"
import { acceptedByPromtool, checkMetrics, unexpectedProblems } from "../metrics/Promtool.ts"
import { eventsOf, eventually, type RunningService, serviceConfig, startService } from "./ServiceHarness.ts"

const mix = { "gb200-nvl72": 2, "h100-hgx": 1, "a100-mig": 1, t4: 1, "broken-driver": 1 } as const

let cluster: SimulatedCluster | undefined
let service: RunningService | undefined

afterEach(async () => {
  await service?.stop()
  await cluster?.close()
  service = undefined
  cluster = undefined
})

const healthyGpus = (sim: SimulatedCluster): ReadonlyArray<string> =>
  sim
    .nodeNames()
    .flatMap((name) => {
      const node = sim.node(name)
      return node === undefined || node.driverFailure !== undefined ? [] : node.gpus.map((gpu) => gpu.uuid)
    })
    .sort()

const fetchText = async (port: number, path: string): Promise<{ status: number; body: string }> => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`)
  return { status: response.status, body: await response.text() }
}

describe("gpu-serials service against the simulated cluster", () => {
  it("announces every GPU of every ready pod exactly once, reports the broken driver as a metric, and becomes ready", async () => {
    cluster = await startSimulatedCluster({ nodes: 6, modelMix: mix, seed: "e2e-initial", execLatency: 20 })
    service = await startService(serviceConfig(cluster))
    const expected = healthyGpus(cluster)
    const running = service

    await eventually(
      running,
      "every healthy GPU is added",
      () => eventsOf(running.events, "added").length >= expected.length,
    )
    await eventually(running, "the service is ready", () => running.port() !== 0)
    const added = eventsOf(running.events, "added").map((event) => event.record.uuid)
    expect([...added].sort()).toEqual(expected)

    const gb200 = eventsOf(running.events, "added").filter((event) => event.record.product === "NVIDIA GB200")
    expect(gb200.length).toBe(8)
    expect(new Set(gb200.map((event) => event.record.uuid)).size).toBe(8)
    expect(gb200.every((event) => event.record.serialShared && event.record.chassis !== "")).toBe(true)

    const metrics = await fetchText(running.port(), "/metrics")
    expect(metrics.body).toMatch(/gpu_serials_readings_total\{[^}]*error_kind="driver-not-loaded"[^}]*\} 1/)
    let ready = await fetchText(running.port(), "/readyz")
    for (let attempt = 0; attempt < 40 && ready.status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      ready = await fetchText(running.port(), "/readyz")
    }
    expect(ready.status).toBe(200)
  })

  it("stays quiet on a pod restart, reports a GPU swap as moved, and a removed node as removed", async () => {
    cluster = await startSimulatedCluster({ nodes: 4, modelMix: { "h100-hgx": 2, t4: 2 }, seed: "e2e-churn" })
    service = await startService(serviceConfig(cluster, ["--removal-grace", "1s"]))
    const sim = cluster
    const running = service
    const total = healthyGpus(sim).length
    await eventually(running, "initial sync", () => eventsOf(running.events, "added").length === total)

    const [first, second, third] = sim.nodeNames().filter((name) => sim.node(name)?.model === "h100-hgx")
    const t4 = sim.nodeNames().find((name) => sim.node(name)?.model === "t4")
    if (first === undefined || second === undefined || t4 === undefined) throw new Error("fleet lacks nodes")
    expect(third).toBeUndefined()

    const before = running.events.length
    sim.restartPod(t4)
    const swapped = sim.swapGpus(first, second)
    await eventually(
      running,
      "both swapped GPUs are moved",
      () => eventsOf(running.events, "moved").length >= swapped.length,
    )
    const moved = eventsOf(running.events, "moved")
    expect(moved.map((event) => event.record.uuid).sort()).toEqual([...swapped].sort())
    for (const event of moved) {
      expect(event.record.previousNode).not.toBe(event.record.node)
      expect([first, second]).toContain(event.record.node)
    }

    sim.removeNode(t4)
    await eventually(
      running,
      "the removed node's GPU is removed",
      () => eventsOf(running.events, "removed").length === 1,
      30_000,
    )
    expect(eventsOf(running.events, "removed")[0]?.record.node).toBe(t4)
    const after = running.events.slice(before)
    expect(eventsOf(after, "added")).toEqual([])
  })

  it("exports one gpu_serials_gpu_info series per known GPU in DCGM's spelling, following moves and removals", async () => {
    cluster = await startSimulatedCluster({
      nodes: 4,
      modelMix: { "h100-hgx": 2, "gb200-nvl72": 1, t4: 1 },
      seed: "e2e-info",
    })
    service = await startService(serviceConfig(cluster, ["--removal-grace", "1s"]))
    const sim = cluster
    const running = service
    const total = healthyGpus(sim).length
    await eventually(running, "initial sync", () => eventsOf(running.events, "added").length === total)

    const infoOf = async () => {
      const exposition = (await fetchText(running.port(), "/metrics")).body
      return { exposition, info: samplesOf(parseSamples(exposition), "gpu_serials_gpu_info") }
    }
    const { exposition, info } = await infoOf()
    expect(acceptedByPromtool(await checkMetrics(exposition))).toBe(true)
    expect(info.map((sample) => sample.labels.UUID).sort()).toEqual(healthyGpus(sim))
    for (const name of sim.nodeNames()) {
      const node = sim.node(name)
      for (const gpu of node?.gpus ?? []) {
        expect(info.find((sample) => sample.labels.UUID === gpu.uuid)?.labels).toEqual({
          UUID: gpu.uuid,
          pci_bus_id: gpu.pciBusId,
          modelName: node?.productName,
          Hostname: name,
          serial: gpu.serial === "N/A" ? "" : gpu.serial,
          chassis: gpu.chassisSerial ?? "",
          cluster: "e2e",
        })
      }
    }

    const [first, second] = sim.nodeNames().filter((name) => sim.node(name)?.model === "h100-hgx")
    const t4 = sim.nodeNames().find((name) => sim.node(name)?.model === "t4")
    if (first === undefined || second === undefined || t4 === undefined) throw new Error("fleet lacks nodes")
    const removedUuids = (sim.node(t4)?.gpus ?? []).map((gpu) => gpu.uuid)
    const swapped = sim.swapGpus(first, second)
    sim.removeNode(t4)
    await eventually(
      running,
      "the swap and the removal are exported",
      () =>
        eventsOf(running.events, "moved").length >= swapped.length && eventsOf(running.events, "removed").length === 1,
      30_000,
    )
    const after = (await infoOf()).info
    expect(after.map((sample) => sample.labels.UUID).sort()).toEqual(healthyGpus(sim))
    expect(removedUuids.length).toBeGreaterThan(0)
    expect(
      after.filter((sample) => removedUuids.includes(sample.labels.UUID ?? "") || sample.labels.Hostname === t4),
    ).toEqual([])
    for (const uuid of swapped) {
      const now = [first, second].find((name) => sim.node(name)?.gpus.some((gpu) => gpu.uuid === uuid))
      expect(after.filter((sample) => sample.labels.UUID === uuid).map((sample) => sample.labels.Hostname)).toEqual([
        now,
      ])
    }
  })

  it("recovers from 429s, 5xx, dropped watches and hanging execs without losing or repeating a GPU", async () => {
    cluster = await startSimulatedCluster({
      nodes: 6,
      modelMix: { "h100-hgx": 2, t4: 2, l40s: 2 },
      seed: "e2e-faults",
      execLatency: 10,
      faults: { serverError: 0.15, throttle: 0.15, retryAfterSeconds: 1, execHang: 0.2 },
    })
    service = await startService(serviceConfig(cluster, ["--timeout", "1s"]), {
      retryBackoff: { baseMs: 50, maxMs: 500, jitter: 0.2 },
      maxAttempts: 20,
    })
    const sim = cluster
    const running = service
    sim.faults.dropWatches()
    const expected = healthyGpus(sim)
    await eventually(
      running,
      "every GPU is added despite faults",
      () => eventsOf(running.events, "added").length >= expected.length,
      40_000,
    )
    sim.faults.clear()
    sim.faults.dropWatches()
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const added = eventsOf(running.events, "added").map((event) => event.record.uuid)
    expect([...added].sort()).toEqual(expected)
  })
})

describe("gpu-serials service: failures an operator can see", () => {
  it("a wrong CONTAINER: /readyz names it under readings, /metrics counts the failing nodes, the logs say why", async () => {
    cluster = await startSimulatedCluster({ nodes: 3, modelMix: { t4: 1 }, seed: "e2e-container", execLatency: 5 })
    service = await startService(serviceConfig(cluster, ["--container", "nvidia-device-plugin-ctr"]))
    const running = service
    await eventually(running, "the ERROR line", () => running.logs.some((line) => line.level === "error"))

    const started = running.logs.find((line) => line.msg === "kube_exec receiver starting")
    expect(started?.kubeconfig).toBe(cluster.kubeconfigPath)
    const warnings = running.logs.filter((line) => line.level === "warn" && line.kind === "exec-container-not-found")
    expect(new Set(warnings.map((line) => line.node))).toEqual(new Set(cluster.nodeNames()))
    expect(running.logs.find((line) => line.level === "error")?.setting).toBe("CONTAINER")

    const ready = await fetchText(running.port(), "/readyz")
    expect(ready.status).toBe(503)
    const checks = (JSON.parse(ready.body) as { checks: Record<string, string> }).checks
    expect(checks.readings).toContain("check CONTAINER")
    expect(checks.informers).toBe("ok")

    const metrics = await fetchText(running.port(), "/metrics")
    expect(metrics.body).toMatch(/^gpu_serials_nodes_failing\{[^}]*error_kind="exec-container-not-found"[^}]*\} 3$/m)
    const verdict = await checkMetrics(metrics.body)
    expect(unexpectedProblems(verdict)).toEqual([])
    expect(acceptedByPromtool(verdict)).toBe(true)
  })

  it("forbidden exec fails readings with RBAC named; once allowed, /readyz passes and the gauge drops to 0", async () => {
    cluster = await startSimulatedCluster({ nodes: 2, modelMix: { t4: 1 }, seed: "e2e-rbac", execLatency: 5 })
    cluster.access.deny({ resource: "pods", subresource: "exec" })
    service = await startService(serviceConfig(cluster, ["--resync", "1s"]))
    const running = service
    const sim = cluster
    await eventually(running, "the ERROR line", () => running.logs.some((line) => line.level === "error"))
    const refused = await fetchText(running.port(), "/readyz")
    expect(refused.status).toBe(503)
    expect(refused.body).toContain("check RBAC")
    expect((await fetchText(running.port(), "/metrics")).body).toMatch(
      /^gpu_serials_nodes_failing\{[^}]*error_kind="exec-forbidden"[^}]*\} 2$/m,
    )

    sim.access.allowAll()
    await eventually(
      running,
      "every GPU added",
      () => eventsOf(running.events, "added").length === healthyGpus(sim).length,
    )
    let ready = await fetchText(running.port(), "/readyz")
    for (let attempt = 0; attempt < 40 && ready.status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      ready = await fetchText(running.port(), "/readyz")
    }
    expect(ready.status).toBe(200)
    expect((await fetchText(running.port(), "/metrics")).body).toMatch(
      /^gpu_serials_nodes_failing\{[^}]*error_kind="exec-forbidden"[^}]*\} 0$/m,
    )
    expect(running.logs.filter((line) => line.msg === "node reading recovered").length).toBe(2)
  })
})
