import { describe, expect, it } from "vitest"
import { devicePluginPodOf } from "../../../src/receiver/kube/DevicePluginPod.ts"
import { isPodReady } from "../../../src/receiver/kube/PodReadiness.ts"

const running = (ready: ReadonlyArray<boolean>) => ({
  status: { phase: "Running", containerStatuses: ready.map((value) => ({ ready: value })) },
})

describe("pod readiness", () => {
  it("is ready when Running with every container ready", () => {
    expect(isPodReady(running([true, true]))).toBe(true)
  })

  it("is not ready while a container is not ready, or before any container reports", () => {
    expect(isPodReady(running([true, false]))).toBe(false)
    expect(isPodReady(running([]))).toBe(false)
    expect(isPodReady({ status: { phase: "Running" } })).toBe(false)
  })

  it("is not ready in any other phase", () => {
    for (const phase of ["Pending", "Succeeded", "Failed", "Unknown"]) {
      expect(isPodReady({ status: { phase, containerStatuses: [{ ready: true }] } })).toBe(false)
    }
    expect(isPodReady({})).toBe(false)
  })

  it("is not ready once it is being deleted", () => {
    expect(isPodReady({ ...running([true]), metadata: { deletionTimestamp: "2025-01-01T00:00:00Z" } })).toBe(false)
    expect(isPodReady({ ...running([true]), metadata: { deletionTimestamp: new Date() } })).toBe(false)
  })
})

describe("device-plugin pod as the receiver keeps it", () => {
  it("reads a watched pod", () => {
    const pod = devicePluginPodOf({
      metadata: { name: "nvidia-device-plugin-abc12", namespace: "gpu-operator", uid: "u-1", resourceVersion: "42" },
      spec: { nodeName: "node-a", containers: [{ name: "nvidia-device-plugin" }] },
      status: { phase: "Running", containerStatuses: [{ name: "nvidia-device-plugin", ready: true }] },
    })
    expect(pod).toEqual({
      key: "gpu-operator/nvidia-device-plugin-abc12",
      namespace: "gpu-operator",
      name: "nvidia-device-plugin-abc12",
      uid: "u-1",
      nodeName: "node-a",
      resourceVersion: "42",
      ready: true,
    })
  })

  it("tolerates absent and null fields, as client-node and the API server leave them", () => {
    const pod = devicePluginPodOf({
      metadata: { name: "p", namespace: "ns", uid: undefined, deletionTimestamp: null },
      spec: { nodeName: undefined },
      status: null,
    })
    expect(pod?.nodeName).toBe("")
    expect(pod?.ready).toBe(false)
  })

  it("refuses what is not a pod", () => {
    expect(devicePluginPodOf({ kind: "Status", code: 410 })).toBeUndefined()
    expect(devicePluginPodOf("pod")).toBeUndefined()
  })

  it("refuses a pod whose kept fields have another type", () => {
    const metadata = { name: "p", namespace: "ns" }
    for (const object of [
      { metadata: { ...metadata, namespace: 3 } },
      { metadata: { ...metadata, uid: {} } },
      { metadata: { ...metadata, resourceVersion: 42 } },
      { metadata, spec: { nodeName: ["node-a"] } },
      { metadata, spec: "node-a" },
      { metadata, status: { phase: 1 } },
      { metadata, status: { phase: "Running", containerStatuses: {} } },
      { metadata, status: { phase: "Running", containerStatuses: [{ ready: "true" }] } },
      { metadata, status: { phase: "Running", containerStatuses: [null] } },
      { metadata, status: [] },
    ]) {
      expect(devicePluginPodOf(object)).toBeUndefined()
    }
    expect(devicePluginPodOf({ metadata, status: { phase: "Running", containerStatuses: null } })?.ready).toBe(false)
  })
})
