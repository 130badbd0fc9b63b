import { describe, expect, it } from "vitest"
import { KubeApiError, kubeApiErrorOf } from "../../../src/kubeclient/rest/KubeApiError.ts"
import { refusal } from "../../../src/kubeclient/rest/KubeTransport.ts"
import { DriverNotLoaded, TruncatedOutput } from "../../../src/nvsmi/NvsmiError.ts"
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
      failureOfExec(new KubeApiError({ operation: "exec", kind: "rejected", status: 400, detail: "bad request" })),
    ).toMatchObject({ kind: "exec-rejected", transient: false })
    expect(readFailure("exec-not-started", "no such file").transient).toBe(false)
  })

  it("tells RBAC (403) and a container the pod does not have (400 naming it) from other rejections", () => {
    const rejected = (status: number, detail: string) =>
      failureOfExec(new KubeApiError({ operation: "exec", kind: "rejected", status, detail }))
    expect(
      rejected(403, 'pods "p" is forbidden: User "u" cannot create resource "pods/exec" in API group ""'),
    ).toMatchObject({ kind: "exec-forbidden", transient: false })
    expect(rejected(400, "container nvidia-device-plugin-ctr is not valid for pod p")).toMatchObject({
      kind: "exec-container-not-found",
      transient: false,
    })
    expect(rejected(400, "a container name must be specified for pod p, choose one of: [a b]").kind).toBe(
      "exec-container-not-found",
    )
    expect(rejected(404, 'pods "p" not found').kind).toBe("exec-rejected")
  })

  it("keeps nvidia-smi's excerpt, never more", () => {
    const failure = failureOfNvsmi(new DriverNotLoaded({ excerpt: "NVIDIA-SMI has failed" }))
    expect(failure.excerpt).toBe("NVIDIA-SMI has failed")
    expect(failureOfNvsmi(new TruncatedOutput({ detail: "unclosed tag" })).excerpt).toBeUndefined()
  })
})

describe("Kubernetes API errors", () => {
  it("classifies refused HTTP answers and keeps the Status message only", () => {
    const throttled = refusal("list pods", 429, JSON.stringify({ kind: "Status", message: "slow down" }))
    expect(throttled).toMatchObject({ kind: "throttled", status: 429, detail: "slow down" })
    expect(refusal("list pods", 503, "")).toMatchObject({ kind: "server-error", detail: "HTTP 503" })
    expect(refusal("list pods", 410, "")).toMatchObject({ kind: "gone" })
    expect(refusal("list pods", 403, JSON.stringify({ message: "forbidden" }))).toMatchObject({
      kind: "rejected",
      transient: false,
    })
    expect(refusal("list pods", 502, "<html>a proxy's login page</html>").detail).toBe("HTTP 502")
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
