import { describe, expect, it } from "vitest"
import { unwrittenNodeLabels } from "../../../../src/receiver/kube/nodelabels/UnwrittenNodeLabels.ts"

const serverError = { kind: "server-error", message: "patch node failed (HTTP 503): unavailable" }

describe("unwrittenNodeLabels", () => {
  it("is nothing when every node's labels were written", () => {
    expect(unwrittenNodeLabels({ end: "done", unfinished: 0, failed: new Map(), budget: "5s" })).toBeUndefined()
  })

  it("counts the nodes left and the nodes whose last attempt failed, with the budget that ran out", () => {
    const failed = new Map([["node-a", serverError]])
    expect(unwrittenNodeLabels({ end: "timed-out", unfinished: 2, failed, budget: "5s" })).toEqual({
      nodes: 3,
      reason: "the shutdown budget (5s) ran out",
      kinds: "server-error",
    })
  })

  it("gives the last failure when every node had its attempt", () => {
    const failed = new Map([
      ["node-a", { kind: "timeout", message: "patch node failed: no answer" }],
      ["node-b", serverError],
    ])
    expect(unwrittenNodeLabels({ end: "done", unfinished: 0, failed, budget: "5s" })).toEqual({
      nodes: 2,
      reason: `the last attempt failed: ${serverError.message}`,
      kinds: "timeout,server-error",
    })
  })

  it("says when the nodes were never listed", () => {
    expect(unwrittenNodeLabels({ end: "never-listed", unfinished: 4, failed: new Map(), budget: "5s" })?.reason).toBe(
      "the node informer never listed the nodes",
    )
  })

  it("leaves the nodes to the next leader when leadership ended", () => {
    expect(unwrittenNodeLabels({ end: "term-ended", unfinished: 2, failed: new Map(), budget: "5s" })).toEqual({
      nodes: 2,
      reason: "the term ended without a shutdown (leadership lost): the next leader or start writes them",
    })
  })
})
