import { describe, expect, it } from "vitest"
import { ApiError } from "../../../src/sim/api/ApiStatus.ts"
import { parseLabelSelector } from "../../../src/sim/api/LabelSelector.ts"

const plugin = { app: "nvidia-device-plugin-daemonset", "pod-template-generation": "3" }

describe("label selectors", () => {
  it.each([
    ["", true],
    ["app=nvidia-device-plugin-daemonset", true],
    ["app==nvidia-device-plugin-daemonset", true],
    ["app!=nvidia-device-plugin-daemonset", false],
    ["app!=other", true],
    ["missing!=x", true],
    ["app in (a, nvidia-device-plugin-daemonset)", true],
    ["app notin (a,b)", true],
    ["app notin (nvidia-device-plugin-daemonset)", false],
    ["app", true],
    ["!app", false],
    ["!missing", true],
    ["app,!missing,pod-template-generation>2", true],
    ["pod-template-generation<3", false],
    ["app=nvidia-device-plugin-daemonset,missing", false],
  ])("%s matches the device-plugin labels: %s", (selector, expected) => {
    expect(parseLabelSelector(selector).matches(plugin)).toBe(expected)
  })

  it.each(["app in (a", "app=in valid", "=x", "app>x", "bad key=1"])("rejects %s with a 400", (selector) => {
    expect(() => parseLabelSelector(selector)).toThrow(ApiError)
    try {
      parseLabelSelector(selector)
    } catch (error) {
      expect(error).toMatchObject({ code: 400, reason: "BadRequest" })
    }
  })

  it("accepts prefixed keys", () => {
    expect(parseLabelSelector("nvidia.com/gpu.present=true").matches({ "nvidia.com/gpu.present": "true" })).toBe(true)
  })
})
