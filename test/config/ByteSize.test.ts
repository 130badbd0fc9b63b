import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { formatByteSize, parseByteSize } from "../../src/config/ByteSize.ts"

describe("parseByteSize", () => {
  it.each([
    ["8Mi", 8 * 1024 * 1024],
    ["512Ki", 512 * 1024],
    ["1Gi", 1024 ** 3],
    ["8388608", 8388608],
    ["500k", 500_000],
    ["8M", 8_000_000],
  ])("reads %s as %d bytes", (text, bytes) => {
    expect(Result.getOrThrow(parseByteSize(text))).toBe(bytes)
  })

  it.each(["8MB", "8 Mi", "-1", "1.5Mi", "Mi", ""])("rejects %j", (text) => {
    expect(Result.isFailure(parseByteSize(text))).toBe(true)
  })

  it("writes the largest exact binary unit", () => {
    expect(formatByteSize(8 * 1024 * 1024)).toBe("8Mi")
    expect(formatByteSize(1536 * 1024)).toBe("1536Ki")
    expect(formatByteSize(1000)).toBe("1000")
  })
})
