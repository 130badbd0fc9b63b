import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { defaultQueueSettings } from "../../src/exporter/exporterhelper/QueueSettings.ts"
import { userSeedWith } from "../support/NkeySeeds.ts"
import { decodeNatsExporterConfig, decodeOtlpExporterConfig } from "./ComponentDecoders.ts"
import { configOf } from "./ResolveFixture.ts"

const problems = <A, E>(result: Result.Result<A, E>): E | undefined =>
  Result.isFailure(result) ? result.failure : undefined

describe("typed sections of the built-in exporters", () => {
  it("read back from the sections `config print` writes, as resolution built them", () => {
    const config = configOf({
      env: {
        CLUSTER_NAME: "c",
        EXPORTER_TYPE: "nats,otlp",
        NATS_URL: "nats://a:4222, nats://b:4222",
        NATS_USER: "u",
        NATS_PASSWORD: "p",
        NATS_TLS_CERT: "/c.crt",
        NATS_TLS_KEY: "/c.key",
        OTEL_EXPORTER_OTLP_TIMEOUT: "2500",
      },
    })
    const section = (id: string): unknown => config.exporters.find((exporter) => exporter.id === id)?.section
    expect(Result.getOrThrow(decodeNatsExporterConfig(section("nats")))).toEqual({
      servers: ["nats://a:4222", "nats://b:4222"],
      subjectPrefix: "gpu.serials",
      streamExpect: true,
      kvBucket: "gpu_serials",
      heartbeatIntervalMs: 30_000,
      auth: { kind: "userPassword", user: "u", password: "p" },
      tls: { certFile: "/c.crt", keyFile: "/c.key" },
      streamSettings: {
        create: true,
        duplicateWindowMs: 120_000,
        retention: "limits",
        maxAgeMs: 7 * 24 * 3_600_000,
        maxBytes: 1024 * 1024 * 1024,
      },
      queue: defaultQueueSettings,
    })
    expect(Result.getOrThrow(decodeOtlpExporterConfig(section("otlp")))).toEqual({
      endpoint: "http://localhost:4318",
      headers: {},
      protocol: "http/protobuf",
      compression: "none",
      timeoutMs: 2_500,
      serviceName: "gpu-serials",
      resourceAttributes: {},
      metricsIntervalMs: 60_000,
      entityEvents: "off",
      queue: defaultQueueSettings,
    })
  })

  it("authenticate to NATS with the credentials of its URL when no authentication setting is set", () => {
    const fromUrl = Result.getOrThrow(
      decodeNatsExporterConfig({ url: "nats://gpu:p%40ss@n1:4222,tls://gpu:p%40ss@n2:4222" }),
    )
    expect(fromUrl.servers).toEqual(["nats://n1:4222", "tls://n2:4222"])
    expect(fromUrl.auth).toEqual({ kind: "userPassword", user: "gpu", password: "p@ss" })
    const token = Result.getOrThrow(decodeNatsExporterConfig({ url: "nats://t0ken@n1:4222" }))
    expect(token.auth).toEqual({ kind: "token", token: "t0ken" })
    const setting = Result.getOrThrow(decodeNatsExporterConfig({ url: "nats://gpu:p@n1:4222", token: "wins" }))
    expect(setting).toMatchObject({ servers: ["nats://n1:4222"], auth: { kind: "token", token: "wins" } })
  })

  it("report problems with keys relative to the section, as factories do", () => {
    expect(problems(decodeOtlpExporterConfig({ endpoint: "x", retries: 3 }))).toEqual([
      { key: "retries", message: "unknown key" },
      { key: "endpoint", message: "OTLP endpoint must be an http:// or https:// URL" },
    ])
    expect(
      problems(decodeNatsExporterConfig({ token: "t", nkeySeed: userSeedWith("ABC"), tls: { key: "/k" } })),
    ).toEqual([
      { key: "nkeySeed", message: "NATS authentication takes only one of creds, token, user/password or nkey seed" },
      { key: "tls.cert", message: "NATS TLS certificate and key must be set together" },
    ])
    expect(problems(decodeNatsExporterConfig({ url: "nats://a:1@n1:4222,nats://b@n2:4222" }))).toEqual([
      { key: "url", message: "NATS URL servers must all carry the same credentials" },
    ])
    expect(problems(decodeOtlpExporterConfig("http://collector"))).toEqual([{ key: "", message: "must be a mapping" }])
    expect(Result.isSuccess(decodeOtlpExporterConfig(null))).toBe(true)
  })
})
