import type { GpuRecord } from "../../src/domain/GpuRecord.ts"
import type { InventoryEvent } from "../../src/domain/InventoryEvent.ts"

/** An `added` event of an H100 on `gpu-node-<n>`, distinct per `n`. */
export const addedEvent = (n: number): InventoryEvent => {
  const record: GpuRecord = {
    schema: "gpu-serials/v1",
    event: "added",
    id: `id-${n}`,
    cluster: "prod-eu",
    node: `gpu-node-${n}`,
    machine: "i-0abc",
    source: "gpu-operator/nvidia-device-plugin-daemonset-x2k9q",
    chassis: "",
    gpu: `0${1_650_000_000_000 + n}`,
    time: "2025-06-01T12:00:00.000Z",
    uuid: `GPU-${String(n).padStart(8, "0")}-1111-2222-3333-444444444444`,
    index: n % 8,
    product: "NVIDIA H100 80GB HBM3",
    pciBusId: "00000000:1B:00.0",
    driverVersion: "570.148.08",
    cudaVersion: "12.8",
    providerId: "aws:///eu-west-1a/i-0abc",
    serialShared: false,
  }
  return {
    record,
    origin: { nodeUid: `uid-${n}`, podNamespace: "gpu-operator", podName: "nvidia-device-plugin-x2k9q" },
  }
}

/** `count` distinct events, numbered from `from`. */
export const addedEvents = (count: number, from = 0): ReadonlyArray<InventoryEvent> =>
  Array.from({ length: count }, (_, offset) => addedEvent(from + offset))
