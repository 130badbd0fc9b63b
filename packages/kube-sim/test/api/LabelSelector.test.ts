import { describe, expect, it } from "vitest"
import { ApiError } from "../../src/api/ApiStatus.ts"
import { parseLabelSelector } from "../../src/api/LabelSelector.ts"

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
    ["missing notin (x)", true],
    ["missing in (x)", false],
    ["missing=", false],
    ["app in ()", false],
    ["missing>1", false],
    ["app>1", false],
    ["pod-template-generation>+2", true],
    [" app = nvidia-device-plugin-daemonset , pod-template-generation in (1,3) ", true],
    ["app,app notin (a),!missing,pod-template-generation!=4", true],
  ])("%s matches the device-plugin labels: %s", (selector, expected) => {
    expect(parseLabelSelector(selector).matches(plugin)).toBe(expected)
  })

  it.each([
    "app in (a",
    "app=in valid",
    "=x",
    "app>x",
    "app>",
    "bad key=1",
    "app in a",
    "app in (a b)",
    "app=(x)",
    "app,",
    ",app",
    "!app=x",
    "app=x=y",
    "app=-x",
    "Example.com/app=x",
    `app=${"x".repeat(64)}`,
    `${"k".repeat(64)}=x`,
  ])("rejects %s with a 400", (selector) => {
    expect(() => parseLabelSelector(selector)).toThrow(ApiError)
    try {
      parseLabelSelector(selector)
    } catch (error) {
      expect(error).toMatchObject({ code: 400, reason: "BadRequest" })
    }
  })

  it("reads `in` and `notin` as plain words where a key or value stands", () => {
    expect(parseLabelSelector("in=notin").matches({ in: "notin" })).toBe(true)
    expect(parseLabelSelector("app in (in,notin)").matches({ app: "notin" })).toBe(true)
  })

  it("reads empty items of a set as the empty value, as the API server does", () => {
    expect(parseLabelSelector("app in ()").matches({ app: "" })).toBe(true)
    expect(parseLabelSelector("app in (,x)").matches({ app: "" })).toBe(true)
    expect(parseLabelSelector("app in (x,)").matches({ app: "" })).toBe(true)
    expect(parseLabelSelector("app in (x,,y)").requirements).toEqual([
      { key: "app", operator: "in", values: ["x", "", "y"] },
    ])
    expect(parseLabelSelector("app notin (x,y)").matches({ app: "" })).toBe(true)
  })

  it("keeps the requirements it parsed", () => {
    expect(parseLabelSelector("a==b,!c,d,e notin (f,f)").requirements).toEqual([
      { key: "a", operator: "=", values: ["b"] },
      { key: "c", operator: "!", values: [] },
      { key: "d", operator: "exists", values: [] },
      { key: "e", operator: "notin", values: ["f"] },
    ])
  })

  it("accepts prefixed keys", () => {
    expect(parseLabelSelector("nvidia.com/gpu.present=true").matches({ "nvidia.com/gpu.present": "true" })).toBe(true)
  })
})
