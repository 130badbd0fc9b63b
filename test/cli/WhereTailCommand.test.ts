import { spawn } from "node:child_process"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { GpuHealth } from "../../src/domain/GpuHealth.ts"
import { upsert } from "../../src/domain/InventoryChange.ts"
import type { KnownGpu } from "../../src/domain/KnownGpu.ts"
import * as NatsExporter from "../../src/exporter/nats/NatsExporter.ts"
import * as NatsKvInventoryStore from "../../src/exporter/nats/NatsKvInventoryStore.ts"
import { addedEvent } from "../exporter/InventoryEvents.ts"
import { type NatsServer, startNatsServer } from "../exporter/nats/NatsServer.ts"
import { upToDateCompiledCli } from "../support/CompiledCli.ts"
import { gpuSerials, jsonLines, repositoryRoot } from "./GpuSerialsCli.ts"

let server: NatsServer
let connection: NatsConnection

beforeAll(async () => {
  server = await startNatsServer()
  connection = await connect({ servers: server.url })
})

afterAll(async () => {
  await connection?.drain()
  await server?.dispose()
})

const seen = new Date("2026-03-01T10:00:00.000Z")

/** One of the two GPUs of a GB200 module: both report serial 1652823054221. */
const gb200 = (index: number, node: string): KnownGpu => ({
  uuid: `GPU-gb200-${index}`,
  node,
  machine: `i-${node}`,
  pod: { namespace: "gpu-operator", name: `nvidia-device-plugin-${node}` },
  gpu: {
    index,
    uuid: `GPU-gb200-${index}`,
    serial: "1652823054221",
    product: "NVIDIA GB200",
    platform: { chassisSerial: "1821124190055" },
  },
  serialShared: true,
  firstSeen: seen,
  lastSeen: seen,
  lastReported: seen,
})

/** A GB200 GPU whose row remap failed: a board to return. */
const remapFailed: GpuHealth = {
  state: "failed",
  reasons: ["row-remap-failure", "row-remap-pending"],
  rmaEligible: true,
  remappedRows: { correctable: 0, uncorrectable: 3, pending: true, failure: true },
}

describe("gpu-serials where and tail", () => {
  it("where prints both GPUs of a shared serial, one by uuid, and fails for an unknown one", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* NatsKvInventoryStore.make({ connection, bucket: "gpu_serials", cluster: "prod-eu" })
        yield* store.apply([upsert({ ...gb200(0, "gb-node-1"), health: remapFailed }), upsert(gb200(1, "gb-node-1"))])
      }),
    )
    const env = { NATS_URL: server.url }

    const bySerial = gpuSerials(["where", "1652823054221"], { env })
    expect(bySerial.stderr).toBe("")
    expect(bySerial.status).toBe(0)
    const lines = bySerial.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^UUID\s+SERIAL\s+CLUSTER\s+NODE\s+MACHINE\s+CHASSIS\s+SINCE\s+LAST SEEN\s+HEALTH$/)
    expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 6))).toEqual([
      ["GPU-gb200-0", "1652823054221", "prod-eu", "gb-node-1", "i-gb-node-1", "1821124190055"],
      ["GPU-gb200-1", "1652823054221", "prod-eu", "gb-node-1", "i-gb-node-1", "1821124190055"],
    ])
    // Each GPU's last health: the board to return, and one whose readings never told it.
    expect(lines.slice(1).map((line) => line.slice(lines[0]?.indexOf("HEALTH")))).toEqual([
      "failed: row-remap-failure,row-remap-pending (RMA)",
      "-",
    ])

    const byUuid = gpuSerials(["where", "GPU-gb200-1", "--format", "json"], { env })
    expect(byUuid.status).toBe(0)
    expect(jsonLines(byUuid.stdout)).toEqual([
      {
        uuid: "GPU-gb200-1",
        serial: "1652823054221",
        cluster: "prod-eu",
        node: "gb-node-1",
        machine: "i-gb-node-1",
        chassis: "1821124190055",
        since: seen.toISOString(),
        lastSeen: seen.toISOString(),
      },
    ])

    const unknown = gpuSerials(["where", "0000"], { env })
    expect(unknown.status).toBe(1)
    expect(unknown.stderr).toContain("no GPU with serial or uuid 0000")

    const usage = gpuSerials(["where"], { env })
    expect(usage.status).toBe(2)
    expect(usage.stderr).toContain("where needs a serial or a uuid")
  }, 60_000)

  it("where searches every cluster sharing the bucket, and --cluster keeps one", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        for (const [cluster, node] of [
          ["prod-eu", "eu-node-1"],
          ["prod-us", "us-node-1"],
        ] as const) {
          const store = yield* NatsKvInventoryStore.make({ connection, bucket: "shared_fleet", cluster })
          yield* store.apply([upsert(gb200(0, node))])
        }
      }),
    )
    const env = { NATS_URL: server.url, NATS_KV_BUCKET: "shared_fleet" }
    const cells = (stdout: string) =>
      stdout
        .trimEnd()
        .split("\n")
        .slice(1)
        .map((line) => line.split(/\s+/).slice(0, 4))

    const everywhere = gpuSerials(["where", "GPU-gb200-0"], { env })
    expect(everywhere.status).toBe(0)
    expect(cells(everywhere.stdout)).toEqual([
      ["GPU-gb200-0", "1652823054221", "prod-eu", "eu-node-1"],
      ["GPU-gb200-0", "1652823054221", "prod-us", "us-node-1"],
    ])

    const us = gpuSerials(["where", "1652823054221", "--cluster", "prod-us"], { env })
    expect(us.status).toBe(0)
    expect(cells(us.stdout)).toEqual([["GPU-gb200-0", "1652823054221", "prod-us", "us-node-1"]])

    const elsewhere = gpuSerials(["where", "GPU-gb200-0", "--cluster", "staging"], { env })
    expect(elsewhere.status).toBe(1)
    expect(elsewhere.stderr).toContain(
      "no GPU with serial or uuid GPU-gb200-0 in cluster staging of bucket shared_fleet",
    )
  }, 60_000)

  it("tail prints the records of the node it follows as they are published, then stops after --count", async () => {
    const child = spawn(
      process.execPath,
      [upToDateCompiledCli(), "tail", "--node", "ip-10-0-1-17.eu-west-1.compute.internal", "--count", "2"],
      { cwd: repositoryRoot, env: { PATH: process.env.PATH ?? "", NATS_URL: server.url } },
    )
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    const listening = new Promise<void>((resolve) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8")
        if (stderr.includes("listening on")) resolve()
      })
    })
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    await listening
    expect(stderr).toContain("listening on gpu.serials.*.ip-10-0-1-17%2Eeu-west-1%2Ecompute%2Einternal.*")

    const followed = (n: number) => {
      const event = addedEvent(n)
      return { ...event, record: { ...event.record, node: "ip-10-0-1-17.eu-west-1.compute.internal" } }
    }
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const config = { ...NatsExporter.factory.defaultConfig, servers: [server.url] }
          const exporter = yield* NatsExporter.factory.create(config, {
            id: "nats",
            clusterName: "prod-eu",
            serviceVersion: "0.0.0-test",
          })
          yield* exporter.export([followed(1), addedEvent(2), followed(3)])
          yield* exporter.flush("5 seconds")
        }),
      ),
    )
    expect(await exited).toBe(0)
    expect(jsonLines(stdout).map((record) => record.id)).toEqual([followed(1).record.id, followed(3).record.id])
  })
})

const esc = "\u001b"
const node = `node-1${esc}[2J${esc}]0;title\u0007`
const machine = `i-1\u009b31m\u2028`

const known: KnownGpu = {
  uuid: "GPU-11111111-2222-3333-4444-555555555555",
  node,
  machine,
  pod: { namespace: "gpu-operator", name: "nvidia-device-plugin-1" },
  gpu: { index: 0, uuid: "GPU-11111111-2222-3333-4444-555555555555", serial: "1650000000001" },
  serialShared: false,
  firstSeen: seen,
  lastSeen: seen,
  lastReported: seen,
}

describe("gpu-serials where on values with control characters", () => {
  it("shows them escaped in the table and in its error lines, and keeps JSON output valid JSON", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* NatsKvInventoryStore.make({ connection, bucket: "gpu_serials", cluster: "prod-eu" })
        yield* store.apply([upsert(known)])
      }),
    )
    const env = { NATS_URL: server.url }

    const table = gpuSerials(["where", "1650000000001"], { env })
    expect(table.status).toBe(0)
    expect(table.stdout).not.toMatch(/[^\P{Cc}\n]|[\u2028\u2029]/u)
    const [header, row] = table.stdout.trimEnd().split("\n")
    expect(row).toContain("node-1\\x1b[2J\\x1b]0;title\\x07")
    expect(row).toContain("i-1\\x9b31m\\u2028")
    expect(row?.indexOf("i-1")).toBe(header?.indexOf("MACHINE"))

    const json = gpuSerials(["where", "1650000000001", "--format", "json"], { env })
    expect(json.status).toBe(0)
    expect(jsonLines(json.stdout)).toMatchObject([{ node, machine }])

    const unknown = gpuSerials(["where", `0000${esc}[2J`], { env })
    expect(unknown.status).toBe(1)
    expect(unknown.stderr).toContain("no GPU with serial or uuid 0000\\x1b[2J")
    expect(unknown.stderr).not.toContain(esc)
    // Three runs of the command line; generous, since each starts a Node process.
  }, 90_000)
})
