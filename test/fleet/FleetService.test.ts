import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { afterEach, describe, expect, it } from "vitest"
import { eventsOf, eventually, type RunningService, serviceConfig, startService } from "../service/ServiceHarness.ts"

let cluster: SimulatedCluster | undefined
let service: RunningService | undefined

afterEach(async () => {
  await service?.stop()
  await cluster?.close()
  service = undefined
  cluster = undefined
})

const api = async <T>(port: number, path: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers, signal: AbortSignal.timeout(5_000) })
  return { status: response.status, body: (await response.json()) as T }
}

interface GpuItem {
  readonly uuid: string
  readonly gpu: string
  readonly node: string
  readonly index: number
}

describe("the fleet API of the running service", () => {
  it("answers from the inventory: search, nodes with their last reading, a swap in the events and the history", async () => {
    cluster = await startSimulatedCluster({
      nodes: 3,
      modelMix: { "h100-hgx": 2, "broken-driver": 1 },
      seed: "fleet-api",
      execLatency: 20,
    })
    const sim = cluster
    service = await startService(serviceConfig(sim, ["--fleet-events", "50"]))
    const running = service
    await eventually(running, "the H100s are added", () => eventsOf(running.events, "added").length === 16)
    await eventually(running, "the server listens", () => running.port() !== 0)
    const port = running.port()

    const status = await api<{ role: string; gpus: number; events: { capacity: number } }>(port, "/api/v1/status")
    expect(status.body).toMatchObject({ role: "single", source: "inventory", gpus: 16, events: { capacity: 50 } })

    const all = await api<{ items: ReadonlyArray<GpuItem>; total: number }>(port, "/api/v1/gpus?limit=1000")
    expect(all.body.total).toBe(16)
    const target = all.body.items.find((item) => item.gpu !== "")
    if (target === undefined) throw new Error("no GPU with a serial")
    const found = await api<{ items: ReadonlyArray<GpuItem> }>(port, `/api/v1/gpus?serial=${target.gpu}`)
    expect(found.body.items.map((item) => item.node)).toEqual([target.node])

    const broken = sim.nodeNames().find((name) => sim.node(name)?.model === "broken-driver")
    let failing = await api<{ items: ReadonlyArray<{ name: string; lastReading?: { result: string } }> }>(
      port,
      "/api/v1/nodes?failing=true",
    )
    for (let attempt = 0; attempt < 100 && failing.body.items.length === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      failing = await api(port, "/api/v1/nodes?failing=true")
    }
    expect(failing.body.items.map((node) => node.name)).toEqual([broken])
    const brokenNode = await api<{ failure?: { kind: string } }>(port, `/api/v1/nodes/${broken}`)
    expect(brokenNode.body.failure?.kind).toBe("driver-not-loaded")

    const [first, second] = sim.nodeNames().filter((name) => sim.node(name)?.model === "h100-hgx")
    if (first === undefined || second === undefined) throw new Error("fleet lacks nodes")
    const swapped = sim.swapGpus(first, second)
    await eventually(running, "the swap is moved", () => eventsOf(running.events, "moved").length >= swapped.length)
    const moves = await api<{ items: ReadonlyArray<{ uuid: string; event: string }> }>(
      port,
      "/api/v1/events?kind=moved",
    )
    expect(moves.body.items.map((item) => item.uuid).sort()).toEqual([...swapped].sort())
    const uuid = swapped[0] ?? ""
    const history = await api<{ from: string; complete: boolean; entries: ReadonlyArray<{ event: string }> }>(
      port,
      `/api/v1/gpus/${uuid}/history`,
    )
    expect(history.body.from).toBe("process")
    expect(history.body.entries.map((entry) => entry.event)).toEqual(["moved", "added"])
    expect(history.body.complete).toBe(true)
    const gpu = await api<GpuItem>(port, `/api/v1/gpus/${uuid}`)
    expect([first, second]).toContain(gpu.body.node)
  }, 60_000)

  it("with --no-fleet-page serves neither page nor API", async () => {
    cluster = await startSimulatedCluster({ nodes: 1, modelMix: { t4: 1 }, seed: "fleet-off", execLatency: 20 })
    service = await startService(serviceConfig(cluster, ["--no-fleet-page"]))
    const running = service
    await eventually(running, "the server listens", () => running.port() !== 0)
    const page = await fetch(`http://127.0.0.1:${running.port()}/api/v1/status`)
    expect(page.status).toBe(404)
    await page.body?.cancel()
  }, 30_000)
})
