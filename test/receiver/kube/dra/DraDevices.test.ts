import { describe, expect, it } from "vitest"
import { type ResourceSlice, resourceSliceOf } from "../../../../src/kubeclient/resource/ResourceSlice.ts"
import {
  draNodeDevicesOf,
  identityKeyOf,
  pciKeyOf,
  smiPciBusIdOf,
} from "../../../../src/receiver/kube/dra/DraDevices.ts"
import { fullGpuUuid, migUuids, parentUuid, sliceV1, sliceV1beta1 } from "./DraSliceFixture.ts"

const decoded = (object: unknown): ResourceSlice => {
  const slice = resourceSliceOf(object)
  if (slice === undefined) throw new Error("not a slice")
  return slice
}

describe("draNodeDevicesOf", () => {
  it("gives the full GPU and the MIG-mode GPU from its MIG devices, in PCI order", () => {
    const devices = draNodeDevicesOf("gpu-node-1", [decoded(sliceV1())])
    expect(devices).toEqual({
      node: "gpu-node-1",
      generation: 1,
      complete: true,
      gpus: [
        {
          uuid: fullGpuUuid,
          product: "NVIDIA A100-PCIE-40GB",
          pciBusId: "00000000:65:00.0",
          driverVersion: "580.126.20",
          migDevices: [],
        },
        {
          uuid: parentUuid,
          product: "NVIDIA A100-PCIE-40GB",
          pciBusId: "00000000:CA:00.0",
          driverVersion: "580.126.20",
          migDevices: [
            { uuid: migUuids[0], profile: "1g.5gb" },
            { uuid: migUuids[1], profile: "1g.5gb" },
          ],
        },
      ],
    })
  })

  it("reads the same GPUs through v1beta1", () => {
    expect(draNodeDevicesOf("gpu-node-1", [decoded(sliceV1beta1())])).toEqual(
      draNodeDevicesOf("gpu-node-1", [decoded(sliceV1())]),
    )
  })

  it("reads the unqualified pcieBusID of drivers before v25.12 and leaves out vfio devices", () => {
    const slice = decoded(sliceV1())
    const old: ResourceSlice = {
      ...slice,
      devices: [
        {
          name: "gpu-0",
          attributes: { type: { string: "gpu" }, uuid: { string: "GPU-a" }, pcieBusID: { string: "0000:1b:00.0" } },
        },
        { name: "gpu-vfio-0", attributes: { type: { string: "vfio" }, uuid: { string: "GPU-b" } } },
      ],
    }
    expect(draNodeDevicesOf("n", [old]).gpus).toEqual([{ uuid: "GPU-a", pciBusId: "00000000:1B:00.0", migDevices: [] }])
  })

  it("considers only the highest generation of the pool", () => {
    const older = decoded(sliceV1({ generation: 1 }))
    const newer: ResourceSlice = {
      ...decoded(sliceV1({ generation: 2 })),
      key: "00001-gpu.nvidia.com-gpu-node-1-abcde",
      devices: [{ name: "gpu-0", attributes: { type: { string: "gpu" }, uuid: { string: "GPU-new" } } }],
    }
    const devices = draNodeDevicesOf("gpu-node-1", [older, newer])
    expect(devices.generation).toBe(2)
    expect(devices.gpus.map((gpu) => gpu.uuid)).toEqual(["GPU-new"])
  })
})

describe("identityKeyOf", () => {
  it("is the same when only the device order or a capacity changed", () => {
    const slice = decoded(sliceV1())
    const reordered: ResourceSlice = { ...slice, devices: [...slice.devices].reverse(), resourceVersion: "102" }
    expect(identityKeyOf(draNodeDevicesOf("n", [reordered]))).toBe(identityKeyOf(draNodeDevicesOf("n", [slice])))
  })

  it("changes with a device removed or a new pool generation", () => {
    const slice = decoded(sliceV1())
    const key = identityKeyOf(draNodeDevicesOf("n", [slice]))
    const fewer: ResourceSlice = { ...slice, devices: slice.devices.slice(1) }
    expect(identityKeyOf(draNodeDevicesOf("n", [fewer]))).not.toBe(key)
    expect(identityKeyOf(draNodeDevicesOf("n", [decoded(sliceV1({ generation: 2 }))]))).not.toBe(key)
  })
})

describe("PCI addresses", () => {
  it("writes the driver's address as nvidia-smi prints it, and matches both spellings", () => {
    expect(smiPciBusIdOf("0000:65:00.0")).toBe("00000000:65:00.0")
    expect(smiPciBusIdOf("0001:ca:00.0")).toBe("00000001:CA:00.0")
    expect(pciKeyOf("00000000:CA:00.0")).toBe(pciKeyOf("0000:ca:00.0"))
  })
})
