import { describe, expect, it } from "vitest"

describe("runtime", () => {
  it("runs on the Node 24 that the project pins, not the system Node", () => {
    expect(Number(process.versions.node.split(".")[0])).toBe(24)
    expect(process.execPath).toContain("node_modules")
  })
})
