import { describe, expect, it } from "vitest"
import {
  currentPoolSlices,
  preferredSliceVersion,
  resourceSliceOf,
} from "../../../src/kubeclient/resource/ResourceSlice.ts"
import { sliceV1, sliceV1beta1 } from "../../receiver/kube/dra/DraSliceFixture.ts"

describe("resourceSliceOf", () => {
  it("reads a v1 slice: driver, node, pool and each device's attributes", () => {
    const slice = resourceSliceOf(sliceV1())
    expect(slice).toMatchObject({
      key: "00000-gpu.nvidia.com-gpu-node-1-4lpks",
      resourceVersion: "101",
      driver: "gpu.nvidia.com",
      nodeName: "gpu-node-1",
      pool: { name: "gpu-node-1", generation: 1, resourceSliceCount: 1 },
    })
    expect(slice?.devices.map((device) => device.name)).toEqual([
      "gpu-1-mig-1g5gb-19-1",
      "gpu-0",
      "gpu-1-mig-1g5gb-19-0",
    ])
    expect(slice?.devices[1]?.attributes["resource.kubernetes.io/pciBusID"]).toEqual({ string: "0000:65:00.0" })
    expect(slice?.devices[1]?.attributes.driverVersion).toEqual({ version: "580.126.20" })
  })

  it("reads the same devices through v1beta1, where attributes sit under basic", () => {
    expect(resourceSliceOf(sliceV1beta1())?.devices).toEqual(resourceSliceOf(sliceV1())?.devices)
  })

  it("is undefined for an object that is not a slice", () => {
    expect(resourceSliceOf({ metadata: { name: "x" } })).toBeUndefined()
    expect(resourceSliceOf("slice")).toBeUndefined()
  })
})

describe("preferredSliceVersion", () => {
  it("takes v1, else v1beta2, else v1beta1", () => {
    expect(preferredSliceVersion(["v1beta1", "v1beta2", "v1"])).toBe("v1")
    expect(preferredSliceVersion(["v1beta1", "v1beta2", "v1alpha3"])).toBe("v1beta2")
    expect(preferredSliceVersion(["v1alpha3", "v1beta1"])).toBe("v1beta1")
    expect(preferredSliceVersion(["v1alpha3"])).toBeUndefined()
  })
})

describe("currentPoolSlices", () => {
  const slice = (name: string, generation: number, resourceSliceCount = 1) => {
    const decoded = resourceSliceOf(sliceV1({ generation }))
    if (decoded === undefined) throw new Error("fixture")
    return { ...decoded, key: name, pool: { ...decoded.pool, resourceSliceCount } }
  }

  it("keeps only the slices of the highest generation", () => {
    const pool = currentPoolSlices([slice("old", 1), slice("new", 2)])
    expect(pool.slices.map((kept) => kept.key)).toEqual(["new"])
    expect(pool.generation).toBe(2)
    expect(pool.complete).toBe(true)
  })

  it("is incomplete while fewer slices than resourceSliceCount are known", () => {
    expect(currentPoolSlices([slice("a", 3, 2)]).complete).toBe(false)
    expect(currentPoolSlices([slice("a", 3, 2), slice("b", 3, 2)]).complete).toBe(true)
    expect(currentPoolSlices([])).toEqual({ slices: [], generation: 0, complete: false })
  })
})
