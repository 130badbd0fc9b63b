import { Duration, Result } from "effect"
import { describe, expect, it } from "vitest"
import { defaultQueueSettings } from "../../../src/exporter/exporterhelper/QueueSettings.ts"
import * as HttpExporter from "../../../src/exporter/http/HttpExporter.ts"
import { configOf, problemsOf } from "../../config/ResolveFixture.ts"

const { defaultConfig, validate } = HttpExporter.factory
const cluster = { CLUSTER_NAME: "prod" }

describe("http exporter config", () => {
  it("has the Go original's defaults and no endpoint", () => {
    expect(defaultConfig).toEqual({
      endpoint: "",
      timeoutMs: 30_000,
      format: "json",
      compression: "none",
      headers: {},
      queue: { ...defaultQueueSettings, writeTimeout: Duration.seconds(5) },
    })
  })

  it("requires an endpoint in every section", () => {
    for (const section of [undefined, null, {}, { endpoint: " " }]) {
      expect(validate(section)).toEqual(Result.fail([{ key: "endpoint", message: "HTTP endpoint URL is required" }]))
    }
    expect(validate({ endpoint: "https://inv.example.com/gpus" })).toEqual(
      Result.succeed({ ...defaultConfig, endpoint: "https://inv.example.com/gpus" }),
    )
  })

  it("reads every setting of the section", () => {
    const section = {
      endpoint: "https://inv.example.com/gpus",
      timeout: "5s",
      authToken: "t",
      format: "ndjson",
      compression: "gzip",
      headers: { "x-tenant": "fleet" },
      tls: { ca: "/etc/ca.pem", cert: "/etc/client.pem", key: "/etc/client.key" },
      batchSize: 100,
    }
    expect(Result.getOrThrow(validate(section))).toEqual({
      endpoint: "https://inv.example.com/gpus",
      timeoutMs: 5000,
      authToken: "t",
      format: "ndjson",
      compression: "gzip",
      headers: { "x-tenant": "fleet" },
      tls: { caFile: "/etc/ca.pem", certFile: "/etc/client.pem", keyFile: "/etc/client.key" },
      queue: { ...defaultConfig.queue, batchSize: 100 },
    })
  })

  it("reports every problem of the section at once, keys relative to it", () => {
    expect(
      validate({ endpoint: "ftp://x", timeout: "0", format: "xml", compression: "br", tls: { cert: "/c.pem" } }),
    ).toEqual(
      Result.fail([
        { key: "endpoint", message: "HTTP endpoint must be a valid HTTP/HTTPS URL" },
        { key: "timeout", message: "timeout must be positive, got 0s" },
        { key: "format", message: expect.stringContaining("HTTP format") },
        { key: "compression", message: expect.stringContaining("HTTP compression") },
        { key: "tls.key", message: "HTTP TLS certificate and key must be set together" },
      ]),
    )
    expect(validate({ endpoint: "http://h/", tls: { key: "/k.pem" } })).toEqual(
      Result.fail([{ key: "tls.cert", message: "HTTP TLS certificate and key must be set together" }]),
    )
  })

  it("check the http exporter with the Go original's messages", () => {
    expect(problemsOf({ env: { ...cluster, EXPORTER_TYPE: "http" } })).toEqual([
      { key: "HTTP_ENDPOINT", message: "HTTP endpoint URL is required" },
    ])
    expect(
      problemsOf({ env: { ...cluster, EXPORTER_TYPE: "http", HTTP_ENDPOINT: "ftp://x", HTTP_TIMEOUT: "0" } }),
    ).toEqual([
      { key: "HTTP_ENDPOINT", message: "HTTP endpoint must be a valid HTTP/HTTPS URL" },
      { key: "HTTP_TIMEOUT", message: "timeout must be positive, got 0s" },
    ])
    const config = configOf({
      env: { ...cluster, EXPORTER_TYPE: "http", HTTP_ENDPOINT: "https://inv.example.com/gpus", HTTP_AUTH_TOKEN: "t" },
    })
    expect(config.exporters[0]?.section).toMatchObject({
      endpoint: "https://inv.example.com/gpus",
      timeout: "30s",
      authToken: "t",
    })
  })

  it("takes the endpoint from the flag, and the section from the config file", () => {
    const fromFlag = configOf({
      env: { ...cluster, EXPORTER_TYPE: "stdout,http" },
      argv: ["--http-endpoint", "http://127.0.0.1:8080/gpus", "--http-format", "ndjson"],
    })
    expect(fromFlag.exporters.map((exporter) => exporter.id)).toEqual(["stdout", "http"])
    expect(fromFlag.exporters[1]?.section).toMatchObject({ endpoint: "http://127.0.0.1:8080/gpus", format: "ndjson" })
    const file = [
      "cluster: { name: prod }",
      "exporters:",
      "  http:",
      "    endpoint: https://inv.example.com/gpus",
      "    compression: gzip",
      "    headers: { x-tenant: fleet }",
      "service:",
      "  pipelines:",
      "    gpus: { exporters: [http] }",
    ].join("\n")
    expect(configOf({ file }).exporters[0]?.section).toMatchObject({
      endpoint: "https://inv.example.com/gpus",
      compression: "gzip",
      headers: { "x-tenant": "fleet" },
    })
    expect(
      problemsOf({
        file: file.replace("    compression: gzip\n", "    compression: gzip\n    tls: { cert: /c.pem }\n"),
      }),
    ).toEqual([{ key: "exporters.http.tls.key", message: "HTTP TLS certificate and key must be set together" }])
  })
})
