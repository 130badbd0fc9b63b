import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { printConfig as printFile } from "../../src/config/PrintConfig.ts"
import { REDACTED } from "../../src/log/UrlRedaction.ts"
import { userSeedWith } from "../support/NkeySeeds.ts"
import { allSettings, builtinComponents } from "./BuiltinSettings.ts"
import { configOf, type Input, resolve } from "./ResolveFixture.ts"

const cluster = { CLUSTER_NAME: "prod" }
const secret = (name: string): string => `s3cr3t-${name.toLowerCase().replaceAll("_", "-")}`
/** A well-formed seed is base32: it carries its marker in capitals. */
const nkeySeed = userSeedWith("S3CR3T")

/** For each secret setting, an environment that selects its exporter and sets it (plus what it needs). */
const secretEnvironments: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  HTTP_ENDPOINT: {
    EXPORTER_TYPE: "http",
    HTTP_ENDPOINT: `https://svc:${secret("HTTP_ENDPOINT")}@inv.example.com/gpus`,
  },
  HTTP_AUTH_TOKEN: {
    EXPORTER_TYPE: "http",
    HTTP_ENDPOINT: "https://inv.example.com/gpus",
    HTTP_AUTH_TOKEN: secret("HTTP_AUTH_TOKEN"),
  },
  HTTP_HEADERS: {
    EXPORTER_TYPE: "http",
    HTTP_ENDPOINT: "https://inv.example.com/gpus",
    HTTP_HEADERS: `x-api-key=${secret("HTTP_HEADERS")}`,
  },
  NATS_URL: {
    EXPORTER_TYPE: "nats",
    NATS_URL: `nats://u:${secret("NATS_URL")}@nats-a:4222,nats://u:${secret("NATS_URL")}@nats-b:4222`,
  },
  NATS_TOKEN: { EXPORTER_TYPE: "nats", NATS_TOKEN: secret("NATS_TOKEN") },
  FLEET_TOKEN: { FLEET_TOKEN: secret("FLEET_TOKEN") },
  NATS_PASSWORD: { EXPORTER_TYPE: "nats", NATS_USER: "gpu-serials", NATS_PASSWORD: secret("NATS_PASSWORD") },
  NATS_NKEY_SEED: { EXPORTER_TYPE: "nats", NATS_NKEY_SEED: nkeySeed },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    EXPORTER_TYPE: "otlp",
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://u:${secret("OTEL_EXPORTER_OTLP_ENDPOINT")}@collector:4318`,
  },
  OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: {
    EXPORTER_TYPE: "otlp",
    OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `https://u:${secret("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")}@logs.example.com/v1/logs`,
  },
  OTEL_EXPORTER_OTLP_HEADERS: {
    EXPORTER_TYPE: "otlp",
    OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${secret("OTEL_EXPORTER_OTLP_HEADERS")},x-tenant=fleet`,
  },
  HUB_NATS_URL: { HUB_NATS_URL: `nats://u:${secret("HUB_NATS_URL")}@hub:4222` },
  HUB_NATS_TOKEN: { HUB_NATS_TOKEN: secret("HUB_NATS_TOKEN") },
  HUB_NATS_PASSWORD: { HUB_NATS_USER: "hub", HUB_NATS_PASSWORD: secret("HUB_NATS_PASSWORD") },
  HUB_NATS_NKEY_SEED: { HUB_NATS_NKEY_SEED: nkeySeed },
  POSTGRES_URL: { EXPORTER_TYPE: "postgres", POSTGRES_URL: `postgres://gpuid:${secret("POSTGRES_URL")}@db:5432/gpuid` },
  POSTGRES_PASSWORD: {
    EXPORTER_TYPE: "postgres",
    POSTGRES_HOST: "db",
    POSTGRES_DB: "gpuid",
    POSTGRES_USER: "gpuid",
    POSTGRES_PASSWORD: secret("POSTGRES_PASSWORD"),
  },
}

/** A hub's pipeline, whose receiver has the HUB_NATS_ settings. */
const hubPipeline = [
  "receivers: { nats: { clusters: [east] } }",
  "processors: { fleet: }",
  "exporters: { stdout: }",
  "service: { pipelines: { gpus: { receivers: [nats], processors: [fleet], exporters: [stdout] } } }",
  "",
].join("\n")

/** The input that sets the secret `name` with `env`: a hub's pipeline for the hub receiver's settings. */
const inputFor = (name: string, env: Readonly<Record<string, string>>): Input =>
  name.startsWith("HUB_") ? { env: { ...cluster, ...env }, file: hubPipeline } : { env: { ...cluster, ...env } }

/** The effective config of `input` as `config print` writes it. */
const printConfig = (input: Input, options: { readonly redact?: boolean; readonly origins?: boolean } = {}): string => {
  const resolved = resolve(input)
  if (Result.isFailure(resolved)) throw new Error(resolved.failure.format())
  return printFile(resolved.success.file, builtinComponents, {
    ...(options.redact === undefined ? {} : { redact: options.redact }),
    ...(options.origins === true ? { origins: resolved.success.origins } : {}),
  })
}

const printed = (input: Input, origins: boolean): string => printConfig(input, { origins })

describe("redaction", () => {
  it("covers every secret setting of the table", () => {
    const secrets = allSettings.filter((setting) => setting.secret !== "none").map((setting) => setting.env)
    expect(Object.keys(secretEnvironments).sort()).toEqual([...secrets].sort())
  })

  it.each(Object.entries(secretEnvironments))("hides %s from the printed config", (name, env) => {
    for (const origins of [false, true]) {
      const text = printed(inputFor(name, env), origins)
      expect(text).not.toContain("s3cr3t")
      expect(text).not.toContain("S3CR3T")
      expect(text).toContain(REDACTED)
    }
    // The secret is really in the config: printing without redaction shows it.
    const clear = printConfig(inputFor(name, env), { redact: false })
    expect(clear).toContain(name.endsWith("NATS_NKEY_SEED") ? nkeySeed : secret(name))
  })

  it("keeps what is not secret: header names, URL hosts and users of NATS", () => {
    const text = printed({ env: { ...cluster, ...secretEnvironments.OTEL_EXPORTER_OTLP_HEADERS } }, false)
    expect(text).toContain("authorization: <redacted>")
    expect(text).toContain("x-tenant: <redacted>")
    const nats = printed({ env: { ...cluster, ...secretEnvironments.NATS_URL } }, false)
    expect(nats).toContain("nats://<redacted>@nats-a:4222,nats://<redacted>@nats-b:4222")
    const user = printed({ env: { ...cluster, ...secretEnvironments.NATS_PASSWORD } }, false)
    expect(user).toContain("user: gpu-serials")
  })

  it("hides whole passwords holding '@', ':' or percent-encoding, and query values, of every URL", () => {
    const env = {
      ...cluster,
      EXPORTER_TYPE: "otlp,nats",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://otlp:pa@ss:s3cr3t-a%40b@collector:4318/prefix/?token=s3cr3t-query",
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "https://logs.example.com/v1/logs?api_key=s3cr3t-logs&tenant=s3cr3t-t",
      NATS_URL: "nats://u:s3cr3t@nats@nats-a:4222,tls://u:s3cr3t@nats@nats-b:4222?x=s3cr3t-q,nats-c:4222",
    }
    for (const origins of [false, true]) {
      const text = printed({ env }, origins)
      expect(text).not.toContain("s3cr3t")
      expect(text).toContain(`endpoint: http://${REDACTED}@collector:4318/prefix/?token=${REDACTED}`)
      expect(text).toContain(`https://logs.example.com/v1/logs?api_key=${REDACTED}&tenant=${REDACTED}`)
      expect(text).toContain(`nats://${REDACTED}@nats-a:4222,tls://${REDACTED}@nats-b:4222?x=${REDACTED},nats-c:4222`)
    }
  })

  it("hides values that look secret in sections no settings describe", () => {
    const file = [
      "cluster: { name: c }",
      "exporters:",
      "  kafka:",
      '    module: "@acme/gpu-serials-kafka"',
      "    brokers: [kafka:9092]",
      "    password: hunter2-s3cr3t",
      "    sasl: { mechanism: plain, credentials: { user: u, key: s3cr3t-key } }",
      "    apiKey: s3cr3t-api",
      "    schemaRegistry: https://u:s3cr3t-registry@registry:8081",
      "service: { pipelines: { gpus: { exporters: [kafka] } } }",
    ].join("\n")
    const text = printed({ file }, false)
    expect(text).not.toContain("s3cr3t")
    expect(text).toContain("kafka:9092")
    expect(text).toContain("mechanism: plain")
    expect(text).toContain("https://<redacted>@registry:8081")
  })
})

describe("printConfig", () => {
  it("writes the config-file layout with Go durations and byte sizes", () => {
    const text = printConfig({ env: { ...cluster, TIMEOUT: "1m30s" } })
    expect(parse(text)).toMatchObject({
      cluster: { name: "prod" },
      receivers: { kube_exec: { timeout: "1m30s", resync: "0s", nvidiaSmi: { maxOutput: "8Mi" } } },
      processors: { inventory: { reportInterval: "1h" } },
      exporters: { stdout: {} },
      service: {
        telemetry: { logs: { level: "info" }, metrics: { port: 8080 } },
        pipelines: { gpus: { receivers: ["kube_exec"], processors: ["inventory"], exporters: ["stdout"] } },
      },
    })
    expect(text).toContain("receivers: [kube_exec]")
  })

  it("says where each value came from when asked", () => {
    const text = printed(
      {
        file: "cluster: { name: from-file }\n",
        env: { TIMEOUT: "10s", EXPORTER_TYPE: "otlp", OTEL_EXPORTER_OTLP_HEADERS: "a=b" },
        argv: ["--workers", "3"],
      },
      true,
    )
    expect(text).toContain("name: from-file # file")
    expect(text).toContain("workers: 3 # flag --workers")
    expect(text).toContain("timeout: 10s # env TIMEOUT")
    expect(text).toContain("qps: 50 # default")
    expect(text).toContain("headers: {a: <redacted>} # env OTEL_EXPORTER_OTLP_HEADERS")
    expect(text).toContain("exporters: [otlp] # env EXPORTER_TYPE")
  })
})

describe("round trip", () => {
  const everything: Input = {
    file: [
      "cluster: { name: '0123' }",
      "exporters:",
      "  nats/archive: { stream: ARCHIVE, tls: { ca: /etc/ca.crt } }",
      '  kafka: { module: "@acme/gpu-serials-kafka", brokers: [k1:9092, k2:9092], acks: all }',
      "  stdout: { queueSize: 200, batchSize: 50 }",
      "service: { pipelines: { gpus: { exporters: [stdout] } } }",
    ].join("\n"),
    env: {
      EXPORTER_TYPE: "stdout,nats,nats/archive,otlp,kafka",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20x%2Cy,x-tenant=a=b",
      OTEL_RESOURCE_ATTRIBUTES: "k8s.cluster.name=prod",
      OTEL_EXPORTER_OTLP_TIMEOUT: "1500",
      NATS_TOKEN: "token: with # signs",
      LEASE_DURATION: "20s",
      POD_NAME: "gpu-serials-7d9f",
      TIMEOUT: "1.5s",
      RESYNC: "1h30m",
      REPORT_INTERVAL: "1.0000015s",
      NVIDIA_SMI_MAX_OUTPUT: "1000000",
      QPS: "12.5",
      LABEL_SELECTOR: "app in (a, b),!legacy",
    },
    argv: ["--no-labels", "--log-level=debug", "--kubeconfig", "/home/me/.kube/config"],
  }

  it("reads the printed config back as the same config", () => {
    const text = printConfig(everything, { redact: false })
    expect(configOf({ file: text })).toEqual(configOf(everything))
  })

  it("reads a printed config with origin comments back as the same config", () => {
    const text = printConfig(everything, { redact: false, origins: true })
    expect(configOf({ file: text })).toEqual(configOf(everything))
  })

  it("reads a redacted config without secrets back as the same config", () => {
    const input = { env: { ...cluster, EXPORTER_TYPE: "otlp,nats", WORKERS: "3" } }
    expect(configOf({ file: printConfig(input) })).toEqual(configOf(input))
  })
})
