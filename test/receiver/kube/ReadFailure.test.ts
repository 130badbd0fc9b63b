import { ApiException } from "@kubernetes/client-node"
import { describe, expect, it } from "vitest"
import { DriverNotLoaded, TruncatedOutput } from "../../../src/nvsmi/NvsmiError.ts"
import { KubeApiError, kubeApiErrorOf } from "../../../src/receiver/kube/KubeApiError.ts"
import { failureOfExec, failureOfNvsmi, readFailure } from "../../../src/receiver/kube/ReadFailure.ts"

describe("read failures", () => {
  it("does not retry what the node will keep saying", () => {
    const failure = failureOfNvsmi(new DriverNotLoaded({ excerpt: "NVIDIA-SMI has failed" }))
    expect(failure.kind).toBe("driver-not-loaded")
    expect(failure.transient).toBe(false)
    expect(failure.detail).not.toContain("NVIDIA-SMI has failed")
  })

  it("retries output cut short, timeouts, throttling, server errors and lost connections", () => {
    expect(failureOfNvsmi(new TruncatedOutput({ detail: "unclosed tag" })).transient).toBe(true)
    for (const kind of ["throttled", "server-error", "timeout", "connection"] as const) {
      const failure = failureOfExec(new KubeApiError({ operation: "exec", kind, detail: "x" }))
      expect(failure.transient).toBe(true)
    }
    expect(readFailure("exec-lost", "closed").transient).toBe(true)
  })

  it("does not retry a rejected exec or a command that cannot start", () => {
    expect(
      failureOfExec(new KubeApiError({ operation: "exec", kind: "rejected", status: 403, detail: "x" })),
    ).toMatchObject({ kind: "exec-rejected", transient: false })
    expect(readFailure("exec-not-started", "no such file").transient).toBe(false)
  })
})

describe("Kubernetes API errors", () => {
  it("classifies HTTP answers of client-node calls and keeps the Status message only", () => {
    const throttled = kubeApiErrorOf(
      "list pods",
      new ApiException(429, "Unknown API Status Code!", JSON.stringify({ kind: "Status", message: "slow down" }), {}),
    )
    expect(throttled).toMatchObject({ kind: "throttled", status: 429, detail: "slow down" })
    expect(kubeApiErrorOf("list pods", new ApiException(503, "x", "", {}))).toMatchObject({ kind: "server-error" })
    expect(kubeApiErrorOf("list pods", new ApiException(410, "x", "", {}))).toMatchObject({ kind: "gone" })
    expect(kubeApiErrorOf("list pods", new ApiException(403, "x", { message: "forbidden" }, {}))).toMatchObject({
      kind: "rejected",
      transient: false,
    })
  })

  it("classifies timeouts, watch statuses, handshake statuses and connection errors", () => {
    expect(kubeApiErrorOf("list", new DOMException("timed out", "TimeoutError")).kind).toBe("timeout")
    expect(kubeApiErrorOf("watch", Object.assign(new Error("Gone"), { statusCode: 410 })).kind).toBe("gone")
    expect(kubeApiErrorOf("exec", new Error("Unexpected server response: 500"))).toMatchObject({
      kind: "server-error",
      status: 500,
    })
    const refused = kubeApiErrorOf("list", new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED") }))
    expect(refused).toMatchObject({ kind: "connection", detail: "connect ECONNREFUSED" })
  })
})
