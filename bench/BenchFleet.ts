import type { Gpu } from "../src/domain/Gpu.ts"
import { gpuRecord } from "../src/domain/GpuRecordBuilder.ts"
import type { InventoryEvent } from "../src/domain/InventoryEvent.ts"

export const benchNodes = 1_000
export const benchGpusPerNode = 8

/**
 * The `added` events of a fleet of 8-GPU H100 nodes, as exporters receive them. Each `round` has its own
 * reading time, so its record ids differ from other rounds' (a de-duplicating sink stores every round).
 */
export const fleetEvents = (round: number): ReadonlyArray<InventoryEvent> =>
  Array.from({ length: benchNodes * benchGpusPerNode }, (_, at) => {
    const node = Math.floor(at / benchGpusPerNode)
    const index = at % benchGpusPerNode
    const gpu: Gpu = {
      index,
      uuid: `GPU-${String(node).padStart(8, "0")}-0000-4000-8000-${String(index).padStart(12, "0")}`,
      serial: `16529230${String(at).padStart(5, "0")}`,
      product: "NVIDIA H100 80GB HBM3",
      pciBusId: `00000000:${(0x18 + index * 0x10).toString(16).toUpperCase()}:00.0`,
      moduleId: index + 1,
      migMode: "Disabled",
    }
    return {
      record: gpuRecord({
        gpu,
        reading: { driverVersion: "570.86.15", cudaVersion: "12.8" },
        context: {
          cluster: "bench",
          node: `ip-10-16-${node >> 8}-${node & 0xff}.ec2.internal`,
          providerId: `aws:///us-east-1a/i-0${String(node).padStart(16, "0")}`,
          source: `gpu-operator/nvidia-device-plugin-daemonset-${node}`,
          time: new Date(Date.UTC(2026, 0, 1, 0, round)),
        },
        event: "added",
        serialShared: false,
      }),
      origin: {
        nodeUid: `uid-${node}`,
        podNamespace: "gpu-operator",
        podName: `nvidia-device-plugin-daemonset-${node}`,
      },
    }
  })
