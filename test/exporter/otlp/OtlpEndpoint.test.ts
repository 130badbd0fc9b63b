import { describe, expect, it } from "vitest"
import { otlpTarget, signalUrl } from "../../../src/exporter/otlp/OtlpEndpoint.ts"

describe("signalUrl", () => {
  it.each([
    ["http://h:4318", "http://h:4318/v1/logs"],
    ["http://h:4318/", "http://h:4318/v1/logs"],
    ["http://h:4318/prefix", "http://h:4318/prefix/v1/logs"],
    ["http://h:4318/prefix/", "http://h:4318/prefix/v1/logs"],
    ["http://h:4318/?token=x", "http://h:4318/v1/logs?token=x"],
    ["http://h:4318/prefix?token=x&t=2", "http://h:4318/prefix/v1/logs?token=x&t=2"],
  ])("joins %s and v1/logs as %s", (endpoint, url) => {
    expect(signalUrl(endpoint, "v1/logs")).toBe(url)
  })

  it("joins the metrics path the same way", () => {
    expect(signalUrl("https://h/otlp/?token=x", "v1/metrics")).toBe("https://h/otlp/v1/metrics?token=x")
  })
})

const basic = (credentials: string): string => `Basic ${Buffer.from(credentials, "utf8").toString("base64")}`

describe("otlpTarget", () => {
  it("turns userinfo into a Basic authorization header, percent-decoded, and strips it from the URL", () => {
    const target = otlpTarget("https://otlp-user:p%40ss%3Aw%C3%B6rd@collector:4318/v1/logs?token=x", { a: "b" })
    expect(target.url).toBe("https://collector:4318/v1/logs?token=x")
    expect(target.headers).toEqual({ a: "b", authorization: basic("otlp-user:p@ss:wörd") })
  })

  it("sends a user without a password as curl does, with an empty password", () => {
    expect(otlpTarget("http://tenant@collector/v1/logs", {}).headers).toEqual({ authorization: basic("tenant:") })
  })

  it("lets an Authorization among the configured headers win, still stripping the userinfo", () => {
    const target = otlpTarget("http://u:p@collector/v1/logs", { Authorization: "Bearer configured" })
    expect(target).toEqual({ url: "http://collector/v1/logs", headers: { Authorization: "Bearer configured" } })
  })

  it("uses a URL without userinfo as it is", () => {
    const headers = { a: "b" }
    expect(otlpTarget("http://collector:4318/custom/logs", headers)).toEqual({
      url: "http://collector:4318/custom/logs",
      headers,
    })
  })
})
