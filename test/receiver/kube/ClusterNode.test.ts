import { describe, expect, it } from "vitest"
import { clusterNodeOf } from "../../../src/receiver/kube/ClusterNode.ts"

const node = (labels?: Record<string, string>) => ({
  metadata: { name: "gpu-node-1", uid: "u-1", resourceVersion: "7", ...(labels === undefined ? {} : { labels }) },
  spec: { providerID: "aws:///us-east-1a/i-0abc" },
})

describe("clusterNodeOf", () => {
  it("keeps the node's identity and the driver branch GPU Feature Discovery labels it with", () => {
    expect(clusterNodeOf(node({ "nvidia.com/cuda.driver.major": "535" }))).toEqual({
      key: "gpu-node-1",
      uid: "u-1",
      providerId: "aws:///us-east-1a/i-0abc",
      resourceVersion: "7",
      driverBranch: 535,
    })
    expect(clusterNodeOf(node({ "nvidia.com/cuda.driver-version.major": "570" }))?.driverBranch).toBe(570)
  })

  it("has no driver branch without the label or with a value that is not a version", () => {
    expect(clusterNodeOf(node())).not.toHaveProperty("driverBranch")
    expect(clusterNodeOf(node({ "nvidia.com/cuda.driver.major": "unknown" }))).not.toHaveProperty("driverBranch")
  })
})

describe("clusterNodeOf with a label prefix", () => {
  it("keeps the labels under the prefix and no other", () => {
    const labelled = node({
      "gpu-serials.dev/gpu-0": "1654221000",
      "gpu-serials.dev/gpu-count": "1",
      "gpu-serials.devx/gpu-0": "other",
      "kubernetes.io/hostname": "gpu-node-1",
    })
    expect(clusterNodeOf(labelled, "gpu-serials.dev")?.labels).toEqual({
      "gpu-serials.dev/gpu-0": "1654221000",
      "gpu-serials.dev/gpu-count": "1",
    })
    expect(clusterNodeOf(labelled)).not.toHaveProperty("labels")
    expect(clusterNodeOf(node(), "gpu-serials.dev")).not.toHaveProperty("labels")
  })
})

describe("clusterNodeOf on what the API server may send", () => {
  it("reads null fields as absent", () => {
    expect(
      clusterNodeOf({ metadata: { name: "n", uid: null, resourceVersion: null, labels: null }, spec: null }),
    ).toEqual({ key: "n", uid: "", providerId: "", resourceVersion: "" })
    expect(clusterNodeOf({ metadata: { name: "n" }, spec: { providerID: null } })?.providerId).toBe("")
  })

  it("refuses an object without a name or with a kept field of another type", () => {
    for (const object of [
      undefined,
      null,
      "node",
      [],
      {},
      { metadata: null },
      { metadata: { name: 7 } },
      { metadata: { name: "n", uid: 1 } },
      { metadata: { name: "n", resourceVersion: 7 } },
      { metadata: { name: "n", labels: { "gpu-serials.dev/gpu-0": 1 } } },
      { metadata: { name: "n", labels: ["a"] } },
      { metadata: { name: "n" }, spec: "aws" },
      { metadata: { name: "n" }, spec: { providerID: 5 } },
    ]) {
      expect(clusterNodeOf(object, "gpu-serials.dev")).toBeUndefined()
    }
  })

  it("keeps none of the object it read from", () => {
    const labels = { "gpu-serials.dev/gpu-0": "1654221000", "kubernetes.io/hostname": "gpu-node-1" }
    const read = clusterNodeOf(node(labels), "gpu-serials.dev")
    expect(read?.labels).not.toBe(labels)
    labels["gpu-serials.dev/gpu-0"] = "changed"
    expect(read?.labels).toEqual({ "gpu-serials.dev/gpu-0": "1654221000" })
  })
})
