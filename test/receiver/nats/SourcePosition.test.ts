import { describe, expect, it } from "vitest"
import { appliedBefore, sourcePosition } from "../../../src/receiver/nats/SourcePosition.ts"

describe("the origin of a sourced hub stream message", () => {
  it("reads the source and sequence of nats-server 2.9 and of 2.10 with its filter and transform", () => {
    expect(sourcePosition("GPU_SERIALS:1OzlGG68 12")).toEqual({ source: "GPU_SERIALS:1OzlGG68", sequence: 12 })
    expect(sourcePosition("GPU_SERIALS:1OzlGG68 7 > >")).toEqual({ source: "GPU_SERIALS:1OzlGG68", sequence: 7 })
  })

  it("has none for a message not sourced or a header that does not read", () => {
    expect(sourcePosition(undefined)).toBeUndefined()
    expect(sourcePosition("")).toBeUndefined()
    expect(sourcePosition("GPU_SERIALS:1OzlGG68")).toBeUndefined()
    expect(sourcePosition("GPU_SERIALS:1OzlGG68 seven")).toBeUndefined()
    expect(sourcePosition("GPU_SERIALS:1OzlGG68 0")).toBeUndefined()
  })

  it("is applied before at or below its own source's mark only", () => {
    const marks = new Map([["GPU_SERIALS:east", 5]])
    expect(appliedBefore(marks, { source: "GPU_SERIALS:east", sequence: 5 })).toBe(true)
    expect(appliedBefore(marks, { source: "GPU_SERIALS:east", sequence: 6 })).toBe(false)
    expect(appliedBefore(marks, { source: "GPU_SERIALS:west", sequence: 1 })).toBe(false)
  })
})
