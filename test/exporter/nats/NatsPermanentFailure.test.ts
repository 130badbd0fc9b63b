import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { jetstreamManager } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import { afterEach, describe, expect, it } from "vitest"
import { freePort } from "../../../src/health/FreePort.ts"
import { repositoryRoot } from "../../cli/GpuSerialsCli.ts"
import { upToDateCompiledCli } from "../../support/CompiledCli.ts"
import { type NatsServer, startNatsServer } from "./NatsServer.ts"

let server: NatsServer | undefined
let cluster: SimulatedCluster | undefined
let configDir: string | undefined

afterEach(async () => {
  await cluster?.close()
  await server?.dispose()
  if (configDir !== undefined) rmSync(configDir, { recursive: true, force: true })
  cluster = undefined
  server = undefined
  configDir = undefined
})

interface Service {
  /** stderr so far: the service's JSON log lines and its last words. */
  readonly stderr: () => string
  readonly port: number
  readonly exited: Promise<number | null>
  readonly stop: () => void
}

/** `gpu-serials run` as its own process against a one-node simulated cluster, with the nats exporter. */
const runService = async (env: Readonly<Record<string, string>>, config?: string): Promise<Service> => {
  cluster = await startSimulatedCluster({ nodes: 1, modelMix: { "h100-hgx": 1 }, seed: "nats-refused" })
  const port = await freePort()
  const configArgs: Array<string> = []
  if (config !== undefined) {
    configDir = mkdtempSync(join(tmpdir(), "gpu-serials-config-"))
    const file = join(configDir, "config.yaml")
    writeFileSync(file, config)
    configArgs.push("--config", file)
  }
  const child = spawn(
    process.execPath,
    [
      upToDateCompiledCli(),
      "run",
      "--kubeconfig",
      cluster.kubeconfigPath,
      "--server-port",
      String(port),
      ...configArgs,
    ],
    {
      cwd: repositoryRoot,
      env: { PATH: process.env.PATH ?? "", CLUSTER_NAME: "prod-eu", EXPORTER_TYPE: "nats", ...env },
    },
  )
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  child.stdout.resume()
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { stderr: () => stderr, port, exited, stop: () => child.kill("SIGTERM") }
}

/** The service's log lines at ERROR that say the exporter cannot write. */
const refusalLines = (stderr: string) =>
  stderr
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.level === "error" && String(line.msg).startsWith("NATS exporter cannot write"))

const withTimeout = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)),
  ])

const expectStartRefused = async (service: Service, reason: string) => {
  const code = await withTimeout(service.exited, 30_000, "the service did not exit")
  expect(code).toBe(1)
  expect(service.stderr()).toContain(`gpu-serials: the service could not start: ${reason}`)
  const errors = refusalLines(service.stderr())
  expect(errors).toHaveLength(1)
  expect(String(errors[0]?.reason)).toContain(reason)
}

describe("nats exporter: failures that retrying cannot fix", () => {
  it("at start, a stream whose subjects overlap another stream's exits 1 with the server's message", async () => {
    server = await startNatsServer()
    const connection = await connect({ servers: server.url })
    const manager = await jetstreamManager(connection)
    await manager.streams.add({ name: "OTHER", subjects: ["gpu.serials.>"] })
    await connection.close()
    const service = await runService({ NATS_URL: server.url, NATS_STREAM: "GPUS" })
    await expectStartRefused(service, "NATS stream GPUS: create: subjects overlap with an existing stream")
  }, 60_000)

  it("at start, a stream config the server refuses (more storage than it grants) exits 1", async () => {
    server = await startNatsServer({ config: "jetstream { max_file_store: 10MB }\n" })
    const service = await runService({ NATS_URL: server.url, NATS_STREAM: "GPUS" })
    await expectStartRefused(service, "NATS stream GPUS: create: insufficient storage resources available")
  }, 60_000)

  it.each([
    [
      "a password",
      ["--user", "gpu-serials", "--pass", "the-right-one"],
      { NATS_USER: "gpu-serials", NATS_PASSWORD: "not-it" },
    ],
    ["a token", ["--auth", "the-right-token"], { NATS_TOKEN: "not-it" }],
  ] as const)(
    "at start, %s the server refuses exits 1 saying so, in one ERROR line, not as a retryable outage",
    async (_what, args, credentials) => {
      server = await startNatsServer({ args: [...args] })
      const service = await runService({ NATS_URL: server.url, ...credentials })
      await expectStartRefused(
        service,
        `cannot connect to NATS at ${server.url}: authorization refused by the server (Authorization Violation)`,
      )
      expect(service.stderr()).not.toContain("NATS not ready, retrying")
      expect(service.stderr()).not.toContain("not-it")
    },
    60_000,
  )

  it("at start, a missing stream with streamCreate false exits 1", async () => {
    server = await startNatsServer()
    const service = await runService({ NATS_URL: server.url, NATS_STREAM: "GPUS", NATS_STREAM_CREATE: "false" })
    await expectStartRefused(
      service,
      "NATS stream GPUS: stream does not exist, and streamCreate is false: create it or set streamCreate to true",
    )
  }, 60_000)

  it.each([
    ["JetStream", { NATS_STREAM: "GPUS" }],
    ["core NATS", {}],
  ])(
    "while running on %s, a user without publish permission fails readiness with the reason and logs one ERROR",
    async (_mode, streamEnv) => {
      server = await startNatsServer({
        config: [
          "authorization {",
          "  users = [",
          "    { user: inventory, password: s3cret-inventory, permissions: {",
          '      publish: { allow: ["$JS.API.>", "$KV.gpu_serials.>", "_INBOX.>"] }',
          '      subscribe: { allow: ["_INBOX.>", "$KV.gpu_serials.>"] } } }',
          "  ]",
          "}",
          "",
        ].join("\n"),
      })
      // Batches of 2 records: the one GPU node's 8 GPUs are several batches, and still one ERROR line.
      const service = await runService(
        { NATS_URL: server.url, NATS_USER: "inventory", NATS_PASSWORD: "s3cret-inventory", ...streamEnv },
        "exporters:\n  nats: { batchSize: 2 }\n",
      )
      const reason = 'NATS publish failed: Permissions Violation for Publish to "gpu.serials.prod-eu.'
      let readiness = ""
      const deadline = Date.now() + 30_000
      while (!readiness.includes(reason)) {
        if (Date.now() > deadline)
          throw new Error(`readiness never named the reason: ${readiness}\n${service.stderr()}`)
        await new Promise((resolve) => setTimeout(resolve, 200))
        const answer = await fetch(`http://127.0.0.1:${service.port}/readyz`).catch(() => undefined)
        if (answer !== undefined) {
          const body = (await answer.json()) as { readonly checks?: Readonly<Record<string, string>> }
          readiness = body.checks?.exporters ?? ""
          if (readiness.includes(reason)) expect(answer.status).toBe(503)
        }
      }
      service.stop()
      expect(await withTimeout(service.exited, 30_000, "the service did not stop")).toBe(0)
      const errors = refusalLines(service.stderr())
      expect(errors).toHaveLength(1)
      expect(String(errors[0]?.reason)).toContain(reason)
      expect(service.stderr().split('"msg":"exporter gave up on a batch"').length - 1).toBeGreaterThan(1)
      expect(service.stderr()).not.toContain("s3cret-inventory")
    },
    60_000,
  )
})
