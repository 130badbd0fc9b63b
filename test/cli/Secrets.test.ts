import { spawn } from "node:child_process"
import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../src/health/FreePort.ts"
import { type NatsServer, startNatsServer } from "../exporter/nats/NatsServer.ts"
import { type OtlpReceiver, startOtlpReceiver } from "../exporter/otlp/OtlpReceiver.ts"
import { upToDateCompiledCli } from "../support/CompiledCli.ts"
import { userSeedWith } from "../support/NkeySeeds.ts"
import { gpuSerials, repositoryRoot } from "./GpuSerialsCli.ts"

/** A distinct secret per place a secret can be given, so a leak names its source. */
const secret = (place: string): string => `s3cr3t-${place}`

const secrets = [
  "nats-url-user",
  "nats-url-password",
  "nats-url-query",
  "nats-url-token",
  "nats-url-token-query",
  "nats-token",
  "nats-password",
  "otlp-user",
  "otlp-password",
  "otlp-query",
  "otlp-logs-user",
  "otlp-logs-password",
  "otlp-logs-query",
  "otlp-header-key",
  "otlp-header-tenant",
  "http-endpoint-password",
  "http-endpoint-query",
  "http-auth-token",
  "postgres-url-password",
  "postgres-url-query",
  "postgres-password",
].map(secret)

const expectNoSecret = (place: string, text: string): void => {
  for (const value of secrets) expect(text, `${value} in ${place}`).not.toContain(value)
  // A well-formed nkey seed is base32, so its marker is in capitals.
  expect(text, `the nkey seed in ${place}`).not.toContain("S3CR3TNATSNKEYSEED")
}

let cluster: SimulatedCluster
let refusedPort: number
/** Requires a token the service does not have. */
let tokenNats: NatsServer
/** Requires a user and password the service does not have. */
let passwordNats: NatsServer
/** Answers every request 401. */
let unauthorized: OtlpReceiver
/** Answers every request 403. */
let forbidden: OtlpReceiver
const receivers = Effect.runSync(Scope.make())

beforeAll(async () => {
  cluster = await startSimulatedCluster({ nodes: 2, modelMix: { "h100-hgx": 1, t4: 1 }, seed: "secrets" })
  refusedPort = await freePort()
  tokenNats = await startNatsServer({ args: ["--auth", "the-right-token"] })
  passwordNats = await startNatsServer({ args: ["--user", "gpu-serials", "--pass", "the-right-password"] })
  unauthorized = await Effect.runPromise(Scope.provide(startOtlpReceiver, receivers))
  forbidden = await Effect.runPromise(Scope.provide(startOtlpReceiver, receivers))
  unauthorized.script(Array.from({ length: 10_000 }, () => ({ status: 401 })))
  forbidden.script(Array.from({ length: 10_000 }, () => ({ status: 403 })))
}, 60_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(receivers, Exit.void))
  await tokenNats?.dispose()
  await passwordNats?.dispose()
  await cluster?.close()
})

const hostOf = (url: string): string => url.replace(/^[a-z]+:\/\//, "")

/** Every secret setting set, with userinfo and query strings in every URL; exporters as `exporters`. */
const secretEnv = (options: {
  readonly exporters: string
  readonly natsAuth: Readonly<Record<string, string>>
  readonly otlpEndpoint: string
  readonly otlpLogsEndpoint: string
}): Record<string, string> => ({
  CLUSTER_NAME: "secrets",
  EXPORTER_TYPE: options.exporters,
  NATS_URL: [
    `nats://nats-user-${secret("nats-url-user")}:${secret("nats-url-password")}@pass@127.0.0.1:${refusedPort}?q=${secret("nats-url-query")}`,
    `nats://${secret("nats-url-token")}@${hostOf(tokenNats.url)}?token=${secret("nats-url-token-query")}`,
    `${hostOf(passwordNats.url)}`,
  ].join(","),
  ...options.natsAuth,
  OTEL_EXPORTER_OTLP_ENDPOINT: `http://${secret("otlp-user")}:${secret("otlp-password")}%40%3A@${hostOf(options.otlpEndpoint)}/prefix/?token=${secret("otlp-query")}`,
  OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `http://${secret("otlp-logs-user")}:p@ss:${secret("otlp-logs-password")}@${hostOf(options.otlpLogsEndpoint)}/v1/logs?api_key=${secret("otlp-logs-query")}`,
  OTEL_EXPORTER_OTLP_HEADERS: `x-api-key=${secret("otlp-header-key")},x-tenant=${secret("otlp-header-tenant")}`,
  OTLP_METRICS_INTERVAL: "1s",
  HTTP_ENDPOINT: `https://svc:${secret("http-endpoint-password")}@inventory.example.com/gpus?token=${secret("http-endpoint-query")}`,
  HTTP_AUTH_TOKEN: secret("http-auth-token"),
  POSTGRES_URL: `postgres://gpuid:${secret("postgres-url-password")}@db:5432/gpuid?sslpassword=${secret("postgres-url-query")}`,
  POSTGRES_PASSWORD: secret("postgres-password"),
})

const natsToken = { NATS_TOKEN: secret("nats-token") }
const natsPassword = { NATS_USER: "gpu-serials", NATS_PASSWORD: secret("nats-password") }
const natsNkey = { NATS_NKEY_SEED: userSeedWith("S3CR3TNATSNKEYSEED") }

interface ServiceRun {
  readonly stdout: string
  readonly stderr: string
  /** Bodies of `/readyz` and `/metrics` read while the sinks were failing. */
  readonly readyz: string
  readonly metrics: string
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Runs `gpu-serials run` against the simulated cluster until `failing` holds for its output and
 * `/readyz`, reads `/readyz` and `/metrics`, then stops it (or waits for it to exit on its own).
 */
const runService = async (
  env: Readonly<Record<string, string>>,
  failing: (stderr: string, readyz: string) => boolean,
): Promise<ServiceRun> => {
  const port = await freePort()
  const child = spawn(
    process.execPath,
    [upToDateCompiledCli(), "run", "--kubeconfig", cluster.kubeconfigPath, "--server-port", String(port)],
    { cwd: repositoryRoot, env: { PATH: process.env.PATH ?? "", ...env } },
  )
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8")
  })
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  let running = true
  void exited.then(() => {
    running = false
  })
  const read = (path: string): Promise<string> =>
    fetch(`http://127.0.0.1:${port}${path}`)
      .then((response) => response.text())
      .catch(() => "")
  let readyz = ""
  let metrics = ""
  // A generous bound, so a service that never fails as expected is stopped and the assertions say why.
  const giveUpAt = Date.now() + 100_000
  while (running && Date.now() < giveUpAt) {
    readyz = await read("/readyz")
    if (failing(stderr, readyz)) {
      metrics = await read("/metrics")
      break
    }
    await delay(200)
  }
  if (running) child.kill("SIGTERM")
  await exited
  return { stdout, stderr, readyz, metrics }
}

const expectNoSecretIn = (name: string, run: ServiceRun): void => {
  expectNoSecret(`${name} stdout`, run.stdout)
  expectNoSecret(`${name} stderr`, run.stderr)
  expectNoSecret(`${name} /readyz`, run.readyz)
  expectNoSecret(`${name} /metrics`, run.metrics)
}

/** How messages name the servers: credentials taken out of the URLs, query values redacted. */
const redactedNatsUrl = (): string =>
  [
    `nats://127.0.0.1:${refusedPort}?q=<redacted>`,
    `nats://${hostOf(tokenNats.url)}?token=<redacted>`,
    hostOf(passwordNats.url),
  ].join(",")

/** How `config print` shows the setting: as written, userinfo and query values redacted. */
const printedNatsUrl = (): string =>
  [
    `nats://<redacted>@127.0.0.1:${refusedPort}?q=<redacted>`,
    `nats://<redacted>@${hostOf(tokenNats.url)}?token=<redacted>`,
    hostOf(passwordNats.url),
  ].join(",")

describe("secrets never leave the process", () => {
  it("config print and validate show no secret, with and without --show-origin", () => {
    const commands = [
      ["config", "print"],
      ["config", "print", "--show-origin"],
      ["config", "validate"],
    ]
    for (const [natsAuth, commandsRun] of [
      [natsToken, commands],
      [natsPassword, commands.slice(1, 2)],
      [natsNkey, commands.slice(1, 2)],
    ] as const) {
      const env = secretEnv({
        exporters: "stdout,otlp,nats",
        natsAuth,
        otlpEndpoint: unauthorized.url,
        otlpLogsEndpoint: forbidden.url,
      })
      for (const args of commandsRun) {
        const run = gpuSerials(args, { env })
        expect(run.status, `${args.join(" ")}: ${run.stderr}`).toBe(0)
        expectNoSecret(`${args.join(" ")} stdout`, run.stdout)
        expectNoSecret(`${args.join(" ")} stderr`, run.stderr)
        if (args[1] === "print") expect(run.stdout).toContain(`url: ${printedNatsUrl()}`)
      }
    }
    // Every way of authenticating at once, with the http and postgres exporters in the pipeline: problems, no values.
    const invalid = gpuSerials(["config", "validate"], {
      env: {
        ...secretEnv({
          exporters: "otlp,nats,http,postgres",
          natsAuth: { ...natsToken, ...natsPassword, ...natsNkey },
          otlpEndpoint: unauthorized.url,
          otlpLogsEndpoint: forbidden.url,
        }),
        OTEL_EXPORTER_OTLP_HEADERS: `no-equals-${secret("otlp-header-key")}`,
      },
    })
    expect(invalid.status).toBe(2)
    expect(invalid.stderr).toContain("NATS authentication takes only one of")
    expect(invalid.stderr).toContain("OTEL_EXPORTER_OTLP_HEADERS")
    expectNoSecret("invalid config validate", invalid.stderr + invalid.stdout)
  }, 120_000)

  it("where and tail name the NATS servers they could not reach, redacted", () => {
    const env = secretEnv({
      exporters: "nats",
      natsAuth: natsToken,
      otlpEndpoint: unauthorized.url,
      otlpLogsEndpoint: forbidden.url,
    })
    for (const args of [
      ["where", "GPU-0"],
      ["tail", "--count", "1"],
    ]) {
      const run = gpuSerials(args, { env })
      expect(run.status, run.stderr).toBe(1)
      expect(run.stderr).toContain(redactedNatsUrl())
      expectNoSecret(`${args[0]} stderr`, run.stderr + run.stdout)
    }
  }, 90_000)

  it("credentials in NATS_URL authenticate, as the NATS clients of other languages read them", () => {
    const right = `nats://gpu-serials:the-right-password@${hostOf(passwordNats.url)}`
    const wrong = `nats://gpu-serials:${secret("nats-url-password")}@${hostOf(passwordNats.url)}`
    const token = `nats://the-right-token@${hostOf(tokenNats.url)}`
    for (const url of [right, token]) {
      // Connected: the bucket the service would have created is missing.
      const run = gpuSerials(["where", "GPU-0"], { env: { NATS_URL: url } })
      expect(run.status).toBe(1)
      expect(run.stderr).toContain("not found")
      expect(run.stderr).not.toMatch(/authorization violation/i)
    }
    const refused = gpuSerials(["where", "GPU-0"], { env: { NATS_URL: wrong } })
    expect(refused.stderr).toMatch(/authorization violation/i)
    expect(refused.stderr).toContain(`cannot connect to NATS at nats://${hostOf(passwordNats.url)}`)
    expectNoSecret("where stderr", refused.stderr)
  }, 90_000)

  it("run keeps them out of logs, /readyz and /metrics while every sink fails", async () => {
    const [natsAuthFailure, natsPasswordFailure, otlpRefused, otlpUnauthorized] = await Promise.all([
      // NATS: one server refuses the connection, one refuses the token, one the password; the OTLP
      // receiver answers 401 to logs and 403 to metrics.
      runService(
        secretEnv({
          exporters: "stdout,otlp,nats",
          natsAuth: natsToken,
          otlpEndpoint: forbidden.url,
          otlpLogsEndpoint: unauthorized.url,
        }),
        // nats.js tries the servers in random order: wait until one of them refused the credentials.
        (stderr) => /authorization refused by the server \(Authorization Violation\)/i.test(stderr),
      ),
      runService(
        secretEnv({
          exporters: "nats",
          natsAuth: natsPassword,
          otlpEndpoint: forbidden.url,
          otlpLogsEndpoint: unauthorized.url,
        }),
        // nats.js tries the servers in random order: wait until one of them refused the credentials.
        (stderr) => /authorization refused by the server \(Authorization Violation\)/i.test(stderr),
      ),
      // OTLP logs and metrics to a port where nothing listens.
      runService(
        secretEnv({
          exporters: "stdout,otlp",
          natsAuth: natsToken,
          otlpEndpoint: `http://127.0.0.1:${refusedPort}`,
          otlpLogsEndpoint: `http://127.0.0.1:${refusedPort}`,
        }),
        (_, readyz) => readyz.includes("OTLP request failed"),
      ),
      // OTLP logs answered 401, metrics 403.
      runService(
        secretEnv({
          exporters: "stdout,otlp",
          natsAuth: natsToken,
          otlpEndpoint: forbidden.url,
          otlpLogsEndpoint: unauthorized.url,
        }),
        (_, readyz) => readyz.includes("HTTP 401"),
      ),
    ])
    expectNoSecretIn("NATS token and OTLP failures", natsAuthFailure)
    expectNoSecretIn("NATS password failure", natsPasswordFailure)
    expectNoSecretIn("OTLP refused", otlpRefused)
    expectNoSecretIn("OTLP 401", otlpUnauthorized)

    // The failures happened and were reported, naming the servers without their secrets.
    expect(natsAuthFailure.stderr).toContain(redactedNatsUrl())
    expect(natsAuthFailure.stderr).toMatch(/Authorization Violation/i)
    expect(natsPasswordFailure.stderr).toMatch(/Authorization Violation/i)
    expect(natsPasswordFailure.stderr).toContain(redactedNatsUrl())
    expect(otlpRefused.readyz).toContain("OTLP request failed")
    expect(otlpUnauthorized.readyz).toContain("HTTP 401")
    expect(otlpUnauthorized.metrics).toContain("gpu_serials_")
    expect(unauthorized.requests.length).toBeGreaterThan(0)
    expect(forbidden.requests.length).toBeGreaterThan(0)
    // The receiver was sent the endpoint's userinfo as Basic authorization, never in the request line.
    const [logsRequest] = unauthorized.requests
    expect(logsRequest?.path).toBe(`/v1/logs?api_key=${secret("otlp-logs-query")}`)
    const basic = Buffer.from(String(logsRequest?.headers.authorization).replace("Basic ", ""), "base64")
    expect(basic.toString("utf8")).toBe(`${secret("otlp-logs-user")}:p@ss:${secret("otlp-logs-password")}`)
  }, 150_000)
})
