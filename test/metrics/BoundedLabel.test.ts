import { describe, expect, it } from "vitest"
import { BoundedLabel, maxLabelValueLength } from "../../src/metrics/BoundedLabel.ts"

describe("BoundedLabel", () => {
  it("keeps the first values as they are and turns later new ones into other", () => {
    const label = new BoundedLabel(2)
    expect(label.value("no_devices")).toBe("no_devices")
    expect(label.value("driver_not_loaded")).toBe("driver_not_loaded")
    expect(label.value("node-17")).toBe("other")
    expect(label.value("no_devices")).toBe("no_devices")
  })

  it("names empty and absent values unknown and cuts long ones", () => {
    const label = new BoundedLabel(10)
    expect(label.value(undefined)).toBe("unknown")
    expect(label.value("  ")).toBe("unknown")
    expect(label.value("x".repeat(500))).toBe("x".repeat(maxLabelValueLength))
  })
})
