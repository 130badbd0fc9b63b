import type { Gpu } from "../src/domain/Gpu.ts"
import type { GpuRecord } from "../src/domain/GpuRecord.ts"
import { gpuRecord } from "../src/domain/GpuRecordBuilder.ts"
import type { InventoryEventKind } from "../src/domain/InventoryEventKind.ts"

/** The hub benches' fleet: 100 clusters of 1,000 GPUs (125 nodes × 8). */
export const hubClusters = 100
export const hubGpusPerCluster = 1_000
export const gpusPerNode = 8

/** The records' first minute: recent, so a removal's window (`CROSS_CLUSTER_WINDOW`, 30 days) is still open. */
export const startMinute = Math.floor(Date.now() / 60_000) - 10

export const clusterName = (cluster: number): string => `c${String(cluster).padStart(3, "0")}`

/** The GPU at position `at` of a cluster (its node is `at / gpusPerNode`). */
export const gpuOf = (cluster: number, at: number): Gpu => {
  const index = at % gpusPerNode
  return {
    index,
    uuid: `GPU-${String(cluster).padStart(4, "0")}${String(at).padStart(4, "0")}-0000-4000-8000-${String(index).padStart(12, "0")}`,
    serial: `1652${String(cluster).padStart(4, "0")}${String(at).padStart(5, "0")}`,
    product: "NVIDIA H100 80GB HBM3",
    pciBusId: `00000000:${(0x18 + index * 0x10).toString(16).toUpperCase()}:00.0`,
    moduleId: index + 1,
    migMode: "Disabled",
  }
}

/** A cluster's record of `gpu` on its node `node`, `minute` minutes after `startMinute`. */
export const hubRecord = (
  gpu: Gpu,
  cluster: number,
  node: number,
  minute: number,
  event: InventoryEventKind,
): GpuRecord =>
  gpuRecord({
    gpu,
    reading: { driverVersion: "570.86.15", cudaVersion: "12.8" },
    context: {
      cluster: clusterName(cluster),
      node: `ip-10-${cluster}-${node >> 8}-${node & 0xff}.ec2.internal`,
      providerId: `aws:///us-east-1a/i-0${String(cluster).padStart(4, "0")}${String(node).padStart(12, "0")}`,
      source: `gpu-operator/nvidia-device-plugin-daemonset-${node}`,
      time: new Date((startMinute + minute) * 60_000),
    },
    event,
    serialShared: false,
  })
