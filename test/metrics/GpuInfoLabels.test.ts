import { describe, expect, it } from "vitest"
import { gpuRecord } from "../../src/domain/GpuRecordBuilder.ts"
import { dcgmPciBusId, dcgmUuid, gpuInfoLabels } from "../../src/metrics/GpuInfoLabels.ts"

/** An H100 as nvidia-smi reports it, on an EKS node, in the record the service exports. */
const h100 = gpuRecord({
  gpu: {
    index: 0,
    uuid: "GPU-15704b32-f531-14ce-0530-1ac21e4b68e6",
    serial: "0652123045987",
    product: "NVIDIA H100 80GB HBM3",
    pciBusId: "00000000:53:00.0",
  },
  reading: { driverVersion: "580.105.08" },
  context: {
    cluster: "prod-east",
    node: "ip-10-0-180-136.ec2.internal",
    providerId: "aws:///us-east-1a/i-0abc",
    source: "gpu-operator/nvidia-device-plugin-daemonset-x7k2q",
    time: new Date("2026-11-30T05:00:00.000Z"),
  },
  event: "added",
  serialShared: false,
})

describe("gpuInfoLabels", () => {
  it("gives a GPU the labels dcgm-exporter gives it, spelled as it spells them, plus serial, chassis and cluster", () => {
    // dcgm-exporter 4.x on the same GPU prints:
    // DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-15704b32-f531-14ce-0530-1ac21e4b68e6",pci_bus_id="00000000:53:00.0",
    //   device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="ip-10-0-180-136.ec2.internal",...} 31
    expect(gpuInfoLabels(h100)).toEqual({
      UUID: "GPU-15704b32-f531-14ce-0530-1ac21e4b68e6",
      pci_bus_id: "00000000:53:00.0",
      modelName: "NVIDIA H100 80GB HBM3",
      Hostname: "ip-10-0-180-136.ec2.internal",
      serial: "0652123045987",
      chassis: "",
      cluster: "prod-east",
    })
  })

  it("keeps the chassis of an NVL72 tray and a serial's leading zeros", () => {
    const labels = gpuInfoLabels({ ...h100, product: "NVIDIA GB200", chassis: "1821225190819", gpu: "0761125340953" })
    expect(labels.chassis).toBe("1821225190819")
    expect(labels.serial).toBe("0761125340953")
    expect(labels.modelName).toBe("NVIDIA GB200")
  })

  it("leaves what the GPU does not report empty, never N/A", () => {
    const { product: _product, pciBusId: _pciBusId, ...bare } = h100
    expect(gpuInfoLabels({ ...bare, gpu: "" })).toMatchObject({ serial: "", modelName: "", pci_bus_id: "" })
  })
})

describe("dcgmPciBusId", () => {
  it.each([
    ["00000000:3B:00.0", "00000000:3B:00.0"],
    ["00000000:3b:00.0", "00000000:3B:00.0"],
    ["0000:3b:00.0", "00000000:3B:00.0"],
    ["3b:00.0", "00000000:3B:00.0"],
    ["00000001:c1:1f.7", "00000001:C1:1F.7"],
    [" 00000000:00:1E.0 ", "00000000:00:1E.0"],
  ])("writes %j as %j", (reported, expected) => {
    expect(dcgmPciBusId(reported)).toBe(expected)
  })

  it("keeps what is not a PCI address as reported, and an absent one empty", () => {
    expect(dcgmPciBusId("pci-slot-3")).toBe("pci-slot-3")
    expect(dcgmPciBusId("00000000:3B:00.9")).toBe("00000000:3B:00.9")
    expect(dcgmPciBusId(undefined)).toBe("")
  })
})

describe("dcgmUuid", () => {
  it.each([
    ["GPU-15704b32-f531-14ce-0530-1ac21e4b68e6", "GPU-15704b32-f531-14ce-0530-1ac21e4b68e6"],
    ["GPU-15704B32-F531-14CE-0530-1AC21E4B68E6", "GPU-15704b32-f531-14ce-0530-1ac21e4b68e6"],
    ["gpu-15704b32-f531-14ce-0530-1ac21e4b68e6", "GPU-15704b32-f531-14ce-0530-1ac21e4b68e6"],
    ["15704b32-f531-14ce-0530-1ac21e4b68e6", "GPU-15704b32-f531-14ce-0530-1ac21e4b68e6"],
  ])("writes %j as %j", (reported, expected) => {
    expect(dcgmUuid(reported)).toBe(expected)
  })

  it("keeps a UUID of another shape as reported", () => {
    expect(dcgmUuid("GPU-aaaaaaaa-0000")).toBe("GPU-aaaaaaaa-0000")
  })
})
