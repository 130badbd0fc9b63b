import { assert, describe, it } from "@effect/vitest"
import { Duration } from "effect"
import { retryAfterOf } from "../../../src/exporter/exporterhelper/RetryAfter.ts"

const now = Date.parse("2026-01-01T00:00:00Z")

describe("Retry-After", () => {
  it("reads delay seconds or an HTTP date", () => {
    assert.deepStrictEqual(retryAfterOf("7", now), Duration.seconds(7))
    assert.deepStrictEqual(retryAfterOf("Thu, 01 Jan 2026 00:00:30 GMT", now), Duration.millis(30_000))
    assert.deepStrictEqual(retryAfterOf("Wed, 31 Dec 2025 23:59:00 GMT", now), Duration.millis(0))
    assert.isUndefined(retryAfterOf("soon", now))
    assert.isUndefined(retryAfterOf(null, now))
    assert.isUndefined(retryAfterOf(undefined, now))
  })
})
