import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { Effect, Exit, Fiber } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import * as NatsExporter from "../../../src/exporter/nats/NatsExporter.ts"
import * as JsonLogger from "../../../src/log/JsonLogger.ts"
import type { ConfiguredExporter } from "../../../src/service/ComponentRegistry.ts"
import { runGpuSerialsService } from "../../../src/service/GpuSerialsService.ts"
import { capturingExporter, serviceConfig } from "../../service/ServiceHarness.ts"
import { type NatsServer, startNatsServer } from "./NatsServer.ts"

let server: NatsServer
let cluster: SimulatedCluster | undefined

beforeAll(async () => {
  server = await startNatsServer()
})

afterEach(async () => {
  await cluster?.close()
  cluster = undefined
})

afterAll(async () => {
  await server?.dispose()
})

const natsExporter = (kvBucket: string): ConfiguredExporter => {
  const config = { ...NatsExporter.factory.defaultConfig, servers: [server.url], kvBucket }
  return {
    id: "nats",
    type: "nats",
    config,
    create: (settings) => NatsExporter.factory.create(config, { ...settings, id: "nats" }),
  }
}

/** Runs the service with a capturing and a nats exporter until `done` holds, then stops it. */
const runUntil = async (
  sim: SimulatedCluster,
  done: (events: ReadonlyArray<InventoryEvent>) => boolean,
  options: { readonly flags?: ReadonlyArray<string>; readonly kvBucket?: string } = {},
): Promise<ReadonlyArray<InventoryEvent>> => {
  const events: Array<InventoryEvent> = []
  const fiber = Effect.runFork(
    runGpuSerialsService({
      // The nats exporter's KV bucket is the inventory's store.
      config: serviceConfig(sim, ["--inventory-store", "nats", ...(options.flags ?? [])]),
      exporters: [capturingExporter(events), natsExporter(options.kvBucket ?? "restart_fleet")],
      serviceVersion: "0.0.0-test",
    }).pipe(Effect.provide(JsonLogger.layer({ level: "error", output: { write: () => undefined } }))),
  )
  const deadline = Date.now() + 20_000
  while (!done(events)) {
    if (fiber.pollUnsafe() !== undefined) throw new Error("the service stopped on its own")
    if (Date.now() > deadline) throw new Error("timed out waiting for the service's events")
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  // One more round of readings may follow; none of it may be an `added`.
  await new Promise((resolve) => setTimeout(resolve, 500))
  const exit = await Effect.runPromise(Fiber.interrupt(fiber).pipe(Effect.andThen(Fiber.await(fiber))))
  expect(Exit.hasInterrupts(exit) || Exit.isSuccess(exit)).toBe(true)
  return events
}

const ofKind = (events: ReadonlyArray<InventoryEvent>, kind: string) =>
  events.filter((event) => event.record.event === kind)

describe("service with the nats exporter's KV bucket as inventory store", () => {
  it("does not announce the fleet again after a restart, and reports a swap made while it was down as moved", async () => {
    cluster = await startSimulatedCluster({ nodes: 3, modelMix: { "h100-hgx": 2, t4: 1 }, seed: "nats-restart" })
    const sim = cluster
    const total = sim.nodeNames().reduce((sum, name) => sum + (sim.node(name)?.gpus.length ?? 0), 0)

    const first = await runUntil(sim, (events) => ofKind(events, "added").length === total)
    expect(ofKind(first, "added").length).toBe(total)

    const [left, right] = sim.nodeNames().filter((name) => sim.node(name)?.model === "h100-hgx")
    if (left === undefined || right === undefined) throw new Error("fleet lacks two H100 nodes")
    const swapped = sim.swapGpus(left, right)

    const second = await runUntil(sim, (events) => ofKind(events, "moved").length >= swapped.length)
    expect(ofKind(second, "added")).toEqual([])
    expect(
      ofKind(second, "moved")
        .map((event) => event.record.uuid)
        .sort(),
    ).toEqual([...swapped].sort())
  }, 60_000)

  it("removes, a grace after it starts, the GPUs of a node deleted while it was down", async () => {
    cluster = await startSimulatedCluster({ nodes: 3, modelMix: { "h100-hgx": 2, t4: 1 }, seed: "nats-restart-gone" })
    const sim = cluster
    const total = sim.nodeNames().reduce((sum, name) => sum + (sim.node(name)?.gpus.length ?? 0), 0)
    const options = { flags: ["--removal-grace", "1s"], kvBucket: "restart_gone_node" }
    await runUntil(sim, (events) => ofKind(events, "added").length === total, options)

    const [deleted] = sim.nodeNames()
    if (deleted === undefined) throw new Error("fleet without nodes")
    const gone = (sim.node(deleted)?.gpus ?? []).map((gpu) => gpu.uuid)
    sim.removeNode(deleted)

    const second = await runUntil(sim, (events) => ofKind(events, "removed").length >= gone.length, options)
    expect(
      ofKind(second, "removed")
        .map((event) => event.record.uuid)
        .sort(),
    ).toEqual([...gone].sort())
    expect(ofKind(second, "added")).toEqual([])
  }, 60_000)
})
