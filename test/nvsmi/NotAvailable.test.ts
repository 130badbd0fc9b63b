import { describe, expect, it } from "vitest"
import { availableValue, gpuConditionOf } from "../../src/nvsmi/NotAvailable.ts"

describe("availableValue", () => {
  it.each([
    "N/A",
    "n/a",
    "[N/A]",
    "",
    "   ",
    "\r\n\t",
    "Not Found",
    "None",
    "Unknown Error",
    "[Unknown Error]",
    "Not Supported",
    "[Not Supported]",
    "Requested functionality has been deprecated",
    "[Requested functionality has been deprecated]",
    "Insufficient Permissions",
    "GPU is lost",
    "GPU requires reset",
    "[GPU requires reset]",
    "[Function Not Found]",
    "[Some future sentinel]",
    " [N/A] ",
  ])("treats %j as not available", (raw) => {
    expect(availableValue(raw)).toBeUndefined()
  })

  it("treats a missing value as not available", () => {
    expect(availableValue(undefined)).toBeUndefined()
  })

  it.each([
    ["0322416026235", "0322416026235"],
    ["  1650522003820\n", "1650522003820"],
    ["0", "0"],
    ["Switch Connected", "Switch Connected"],
    ["NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"],
    ["Nonetheless", "Nonetheless"],
    ["[partial", "[partial"],
  ])("keeps %j as %j", (raw, expected) => {
    expect(availableValue(raw)).toBe(expected)
  })
})

describe("gpuConditionOf", () => {
  it.each([
    ["[GPU requires reset]", "requires-reset"],
    ["GPU requires reset", "requires-reset"],
    [" [gpu requires reset] ", "requires-reset"],
    ["GPU is lost", "lost"],
    ["[GPU is lost]", "lost"],
  ])("reads %j as %s", (raw, condition) => {
    expect(gpuConditionOf(raw)).toBe(condition)
  })

  it.each(["N/A", "[Unknown Error]", "", "GPU-aaaaaaaa-1111-2222-3333-444444444444"])(
    "reads no condition in %j",
    (raw) => {
      expect(gpuConditionOf(raw)).toBeUndefined()
    },
  )
})
