import { describe, expect, it } from "vitest"
import type { Gpu } from "../../src/domain/Gpu.ts"
import { gpuRecord, readingRecords } from "../../src/domain/GpuRecordBuilder.ts"
import type { NodeReading } from "../../src/domain/NodeReading.ts"

const gb200Module = (index: number, uuid: string, serial: string): Gpu => ({
  index,
  uuid,
  serial,
  product: "NVIDIA GB200",
  pciBusId: `00000000:${(0x29 + index).toString(16).toUpperCase()}:00.0`,
  moduleId: index + 1,
  migMode: "Disabled",
  platform: { chassisSerial: "1821225190819", slotNumber: "15", trayIndex: "5", hostId: "1" },
})

const reading: NodeReading = {
  gpus: [
    gb200Module(0, "GPU-aaaaaaaa-0000-0000-0000-000000000000", "1761025346615"),
    gb200Module(1, "GPU-bbbbbbbb-0000-0000-0000-000000000000", "1761025346615"),
    gb200Module(2, "GPU-cccccccc-0000-0000-0000-000000000000", "0761125340953"),
    { index: 3, uuid: "GPU-dddddddd-0000-0000-0000-000000000000" },
  ],
  driverVersion: "570.148.08",
  cudaVersion: "12.8",
  failures: [],
  format: "xml",
}

const context = {
  cluster: "prod-east",
  node: "gb200-tray-05",
  providerId: "aws:///us-east-1a/i-0abc",
  source: "gpu-operator/nvidia-device-plugin-daemonset-x7k2q",
  time: new Date("2026-11-30T05:00:00.000Z"),
}

describe("readingRecords", () => {
  const records = readingRecords(reading, context, "observed")

  it("gives one record per GPU, keyed by UUID, never merged by serial", () => {
    expect(records.map((record) => record.uuid)).toEqual(reading.gpus.map((gpu) => gpu.uuid))
    expect(new Set(records.map((record) => record.id)).size).toBe(4)
  })

  it("keeps the Go original's fields, with empty strings rather than N/A when absent", () => {
    const [first, , third, fourth] = records
    expect(first).toMatchObject({
      cluster: "prod-east",
      node: "gb200-tray-05",
      machine: "i-0abc",
      source: "gpu-operator/nvidia-device-plugin-daemonset-x7k2q",
      chassis: "1821225190819",
      gpu: "1761025346615",
      time: "2026-11-30T05:00:00.000Z",
      schema: "gpu-serials/v1",
      event: "observed",
    })
    expect(third?.gpu).toBe("0761125340953")
    expect(fourth).toMatchObject({ gpu: "", chassis: "" })
    expect(fourth).not.toHaveProperty("product")
    expect(fourth).not.toHaveProperty("moduleId")
  })

  it("marks serials that two GPUs of the reading share", () => {
    expect(records.map((record) => record.serialShared)).toEqual([true, true, false, false])
  })

  it("gives the same id for the same event of the same reading, and another for another event", () => {
    const again = readingRecords(reading, context, "observed")
    expect(again.map((record) => record.id)).toEqual(records.map((record) => record.id))
    const added = readingRecords(reading, context, "added")
    expect(added[0]?.id).not.toBe(records[0]?.id)
  })

  it("exports a node without providerID with machine `na`", () => {
    const { providerId: _, ...withoutProvider } = context
    const [record] = readingRecords(reading, withoutProvider, "added")
    expect(record?.machine).toBe("na")
    expect(record).not.toHaveProperty("providerId")
  })
})

describe("gpuRecord", () => {
  it("carries the previous location of a moved GPU", () => {
    const gpu = reading.gpus[0]
    if (gpu === undefined) throw new Error("fixture has GPUs")
    const record = gpuRecord({
      gpu,
      reading,
      context,
      event: "moved",
      serialShared: true,
      previous: { node: "gb200-tray-04", machine: "i-0old" },
    })
    expect(record).toMatchObject({ event: "moved", previousNode: "gb200-tray-04", previousMachine: "i-0old" })
  })
})

describe("readingRecords with health", () => {
  const fabric = { state: "completed", status: "success", cliqueId: "2", clusterUuid: "889d2be1" }
  const withHealth: NodeReading = {
    ...reading,
    gpus: reading.gpus.map((gpu, index) =>
      index === 3
        ? gpu
        : {
            ...gpu,
            health: {
              remappedRows: { correctable: 0, uncorrectable: 0, pending: index === 1, failure: false },
              fabric,
              vbios: "97.00.82.00.1A",
            },
          },
    ),
  }
  const records = readingRecords(withHealth, context, "observed")

  it("gives each GPU that reports its condition the verdict on it, and none to a GPU that reports nothing", () => {
    expect(records.map((record) => record.health?.state)).toEqual(["ok", "degraded", "ok", undefined])
    expect(records[1]?.health).toMatchObject({
      reasons: ["row-remap-pending"],
      rmaEligible: false,
      remappedRows: { pending: true },
      fabric,
    })
    expect(records[3] !== undefined && "health" in records[3]).toBe(false)
  })

  it("applies the thresholds it is given", () => {
    const narrow: NodeReading = {
      ...reading,
      gpus: [{ index: 0, uuid: "GPU-eeee", health: { remappedRows: { uncorrectable: 20 } } }],
    }
    const limits = { retiredPagesLimit: 63, remappedRowsLimit: 16, volatileUncorrectableLimit: 0 }
    expect(readingRecords(narrow, context, "observed")[0]?.health?.state).toBe("ok")
    expect(readingRecords(narrow, context, "observed", limits)[0]?.health?.reasons).toEqual(["remapped-rows-limit"])
  })
})
