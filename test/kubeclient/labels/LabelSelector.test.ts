import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseLabelSelector } from "../../../src/kubeclient/labels/LabelSelector.ts"

const parse = (selector: string) => Result.getOrThrow(parseLabelSelector(selector))
const problem = (selector: string): string | undefined => {
  const parsed = parseLabelSelector(selector)
  return Result.isFailure(parsed) ? parsed.failure : undefined
}

describe("parseLabelSelector", () => {
  it("reads equality, inequality, set-based and existence requirements", () => {
    expect(parse("app=nvidia-device-plugin-daemonset")).toEqual([
      { key: "app", operator: "=", values: ["nvidia-device-plugin-daemonset"] },
    ])
    expect(parse("app==x, tier!=cache")).toEqual([
      { key: "app", operator: "=", values: ["x"] },
      { key: "tier", operator: "!=", values: ["cache"] },
    ])
    expect(parse("env in (prod, staging),zone notin (a)")).toEqual([
      { key: "env", operator: "in", values: ["prod", "staging"] },
      { key: "zone", operator: "notin", values: ["a"] },
    ])
    expect(parse("nvidia.com/gpu.present,!node-role.kubernetes.io/control-plane")).toEqual([
      { key: "nvidia.com/gpu.present", operator: "exists", values: [] },
      { key: "node-role.kubernetes.io/control-plane", operator: "!", values: [] },
    ])
    expect(parse("gpus>2")).toEqual([{ key: "gpus", operator: ">", values: ["2"] }])
    expect(parse("a=")).toEqual([{ key: "a", operator: "=", values: [""] }])
    expect(parse("a in (in, notin)")).toEqual([{ key: "a", operator: "in", values: ["in", "notin"] }])
    expect(parse("")).toEqual([])
  })

  it.each([
    ["app=a b", "found 'b', expected: ',' or 'end of string'"],
    ["app in prod", "found 'prod', expected: '('"],
    ["app in ()", "for 'in' and 'notin' the set of values can't be empty"],
    ["app in (a", "found 'end of string', expected: ',', ')' or identifier"],
    ["=x", "found '=', expected: !, identifier, or 'end of string'"],
    ["a,", "found 'end of string', expected: identifier after ','"],
    ["!a=b", "found '=', expected: ',' or 'end of string'"],
    ["a>b", "for '>' and '<' the value must be an integer"],
    ["a=(", "found '(', expected: identifier"],
  ])("rejects %j", (selector, message) => {
    expect(problem(selector)).toBe(message)
  })

  it("checks keys and values against Kubernetes label syntax", () => {
    expect(problem("-app=x")).toContain('key "-app"')
    expect(problem("Example.COM/app=x")).toContain("prefix must be a DNS subdomain")
    expect(problem(`app=${"v".repeat(64)}`)).toContain("at most 63 characters")
    expect(problem(`${"k".repeat(64)}=v`)).toContain("1-63 characters")
    expect(problem("app=x_")).toContain('value "x_"')
  })
})
