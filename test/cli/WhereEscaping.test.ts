import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as NatsKvInventoryStore from "../../src/exporter/nats/NatsKvInventoryStore.ts"
import { upsert } from "../../src/processor/inventory/InventoryChange.ts"
import type { KnownGpu } from "../../src/processor/inventory/KnownGpu.ts"
import { type NatsServer, startNatsServer } from "../exporter/nats/NatsServer.ts"
import { gpuSerials, jsonLines } from "./GpuSerialsCli.ts"

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
