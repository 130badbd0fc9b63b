import { assert, describe, it } from "@effect/vitest"
import { Duration } from "effect"
import { networkFailure, statusFailure } from "../../../src/exporter/otlp/ExportFailure.ts"

const now = Date.parse("2026-01-01T00:00:00Z")

describe("OTLP export failures", () => {
  it("retries 429, 502, 503 and 504 only, with the receiver's delay", () => {
    for (const status of [429, 502, 503, 504]) assert.isTrue(statusFailure(status, null, now).retryable)
    for (const status of [400, 401, 403, 404, 413, 500]) assert.isFalse(statusFailure(status, "5", now).retryable)
    assert.deepStrictEqual(statusFailure(429, "3", now).retryAfter, Duration.seconds(3))
    assert.isUndefined(statusFailure(400, "3", now).retryAfter)
  })

  it("keeps the credentials of a URL the HTTP client quotes out of the failure message", () => {
    const refused = new TypeError(
      "Request cannot be constructed from a URL that includes credentials: http://otel:s3cret@collector:4318/v1/logs",
    )
    const failure = networkFailure(refused)
    assert.isTrue(failure.retryable)
    assert.notInclude(failure.message, "s3cret")
    assert.include(failure.message, "collector:4318/v1/logs")
  })
})
