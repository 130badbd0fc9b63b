import { describe, expect, it } from "vitest"
import type { NodeReading } from "../../../../src/domain/NodeReading.ts"
import { resourceSliceOf } from "../../../../src/kubeclient/resource/ResourceSlice.ts"
import { decideFromFacts } from "../../../../src/receiver/kube/dra/DiscoveryDecision.ts"
import { crossCheck, mismatchKeyOf, sliceOnlyReading } from "../../../../src/receiver/kube/dra/DraCrossCheck.ts"
import { draNodeDevicesOf } from "../../../../src/receiver/kube/dra/DraDevices.ts"
import { fullGpuUuid, migUuids, parentUuid, sliceV1 } from "./DraSliceFixture.ts"

const slice = resourceSliceOf(sliceV1())
if (slice === undefined) throw new Error("fixture")
const devices = draNodeDevicesOf("gpu-node-1", [slice])

const reading = (uuids: ReadonlyArray<string>): NodeReading => ({
  gpus: uuids.map((uuid, index) => ({ index, uuid, serial: `132052${index}` })),
  driverVersion: "580.126.20",
  failures: [],
  format: "csv",
})

describe("sliceOnlyReading", () => {
  it("gives each GPU of the slices with its index by PCI rank, no serial", () => {
    expect(sliceOnlyReading(devices)).toEqual({
      gpus: [
        { index: 0, uuid: fullGpuUuid, product: "NVIDIA A100-PCIE-40GB", pciBusId: "00000000:65:00.0" },
        {
          index: 1,
          uuid: parentUuid,
          product: "NVIDIA A100-PCIE-40GB",
          pciBusId: "00000000:CA:00.0",
          migDevices: [
            { uuid: migUuids[0], profile: "1g.5gb" },
            { uuid: migUuids[1], profile: "1g.5gb" },
          ],
        },
      ],
      driverVersion: "580.126.20",
      failures: [],
      format: "resourceslices",
    })
  })
})

describe("crossCheck", () => {
  it("puts the MIG devices on the reading's GPU and finds no mismatch when both agree", () => {
    const checked = crossCheck(reading([fullGpuUuid, parentUuid]), devices)
    expect(checked.reading.gpus[1]?.migDevices?.map((mig) => mig.uuid)).toEqual(migUuids)
    expect(checked.reading.gpus[0]?.migDevices).toBeUndefined()
    expect(checked.reading.gpus[1]?.serial).toBe("1320521")
    expect(mismatchKeyOf(checked)).toBe("")
  })

  it("names the UUIDs one side lacks", () => {
    const checked = crossCheck(reading([parentUuid, "GPU-extra"]), devices)
    expect(checked.missingFromSlices).toEqual(["GPU-extra"])
    expect(checked.missingFromReading).toEqual([fullGpuUuid])
    expect(mismatchKeyOf(checked)).not.toBe("")
  })

  it("does not count a GPU nvidia-smi could not read as missing from the reading", () => {
    const partial: NodeReading = {
      ...reading([parentUuid]),
      failures: [{ kind: "device-handle", reason: "Unknown Error" }],
    }
    expect(crossCheck(partial, devices).missingFromReading).toEqual([])
  })
})

describe("decideFromFacts", () => {
  const target = {
    namespace: "gpu-operator",
    labelSelector: "app=nvidia-device-plugin-daemonset",
    container: "nvidia-device-plugin",
    nvidiaSmiPath: "nvidia-smi",
    nvidiaMlLibrary: "",
  }

  it("picks dra only with slices of gpu.nvidia.com and no device-plugin pod", () => {
    expect(decideFromFacts({ sliceVersion: "v1", nvidiaSlices: true, devicePluginPods: false }, target).mode).toBe(
      "dra",
    )
    expect(decideFromFacts({ sliceVersion: "v1", nvidiaSlices: true, devicePluginPods: true }, target)).toMatchObject({
      mode: "device-plugin",
      reason: expect.stringContaining("device-plugin pods"),
    })
    expect(
      decideFromFacts({ sliceVersion: "v1beta1", nvidiaSlices: false, devicePluginPods: false }, target),
    ).toMatchObject({
      mode: "device-plugin",
      reason: expect.stringContaining("no ResourceSlice of driver gpu.nvidia.com"),
    })
    expect(
      decideFromFacts({ sliceVersion: undefined, nvidiaSlices: false, devicePluginPods: false }, target),
    ).toMatchObject({
      mode: "device-plugin",
      reason: expect.stringContaining("does not serve resource.k8s.io"),
    })
  })
})
