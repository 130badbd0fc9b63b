import { describe, expect, it } from "vitest"
import { FailingNodes } from "../../../src/receiver/kube/FailingNodes.ts"

const minutes = (count: number) => count * 60 * 1000
const options = { repeatLogIntervalMs: minutes(10), maxNodes: 100 }

describe("failing nodes", () => {
  it("logs a node's failure kind at most once per interval, the next line carrying the repeats held back", () => {
    const failing = new FailingNodes(options)
    expect(failing.failed("gpu-1", "driver-not-loaded", 0)).toEqual({ _tag: "Log", suppressed: 0 })
    expect(failing.failed("gpu-1", "driver-not-loaded", minutes(1))).toEqual({ _tag: "Suppressed" })
    expect(failing.failed("gpu-1", "driver-not-loaded", minutes(9))).toEqual({ _tag: "Suppressed" })
    expect(failing.failed("gpu-1", "driver-not-loaded", minutes(10))).toEqual({ _tag: "Log", suppressed: 2 })
    expect(failing.failed("gpu-1", "driver-not-loaded", minutes(11))).toEqual({ _tag: "Suppressed" })
    expect(failing.failed("gpu-1", "driver-not-loaded", minutes(25))).toEqual({ _tag: "Log", suppressed: 1 })
  })

  it("limits each node and each kind on its own", () => {
    const failing = new FailingNodes(options)
    expect(failing.failed("gpu-1", "driver-not-loaded", 0)._tag).toBe("Log")
    expect(failing.failed("gpu-2", "driver-not-loaded", 0)._tag).toBe("Log")
    expect(failing.failed("gpu-1", "exec-timeout", 1)._tag).toBe("Log")
    expect(failing.failed("gpu-1", "driver-not-loaded", 2)._tag).toBe("Suppressed")
  })

  it("tells the kind a node recovered from, once, and keeps the limit across a recovery", () => {
    const failing = new FailingNodes(options)
    expect(failing.succeeded("gpu-1")).toBeUndefined()
    failing.failed("gpu-1", "no-devices", 0)
    expect(failing.succeeded("gpu-1")).toBe("no-devices")
    expect(failing.succeeded("gpu-1")).toBeUndefined()
    expect(failing.failed("gpu-1", "no-devices", minutes(1))).toEqual({ _tag: "Suppressed" })
  })

  it("counts the nodes failing now by kind; a recovered or forgotten node leaves the count", () => {
    const failing = new FailingNodes(options)
    failing.failed("gpu-1", "driver-not-loaded", 0)
    failing.failed("gpu-2", "driver-not-loaded", 0)
    failing.failed("gpu-3", "exec-forbidden", 0)
    failing.succeeded("gpu-4")
    expect(failing.failingByKind()).toEqual(
      new Map([
        ["driver-not-loaded", 2],
        ["exec-forbidden", 1],
      ]),
    )
    failing.failed("gpu-3", "driver-not-loaded", 1)
    failing.succeeded("gpu-1")
    failing.forget("gpu-2")
    expect(failing.failingByKind()).toEqual(new Map([["driver-not-loaded", 1]]))
    expect(failing.summary()).toMatchObject({ everSucceeded: true, everFailed: true, succeeding: 2, judged: 3 })
  })

  it("remembers at most maxNodes nodes, forgetting the oldest", () => {
    const failing = new FailingNodes({ ...options, maxNodes: 3 })
    for (let index = 0; index < 10; index++) failing.failed(`gpu-${index}`, "exec-timeout", index)
    expect(failing.size).toBe(3)
    expect(failing.failingByKind()).toEqual(new Map([["exec-timeout", 3]]))
    expect(failing.failed("gpu-9", "exec-timeout", 20)._tag).toBe("Suppressed")
    expect(failing.failed("gpu-0", "exec-timeout", 20)._tag).toBe("Log")
  })
})
