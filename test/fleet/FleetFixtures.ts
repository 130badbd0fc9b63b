import type { GpuHealth } from "../../src/domain/GpuHealth.ts"
import type { GpuRecord } from "../../src/domain/GpuRecord.ts"
import type { InventoryEvent } from "../../src/domain/InventoryEvent.ts"
import type { KnownGpu } from "../../src/domain/KnownGpu.ts"

export const t0 = new Date("2026-01-02T03:00:00.000Z")

/** A known GPU as the inventory keeps it. */
export const knownGpu = (options: {
  readonly uuid: string
  readonly node: string
  readonly index: number
  readonly serial?: string
  readonly chassis?: string
  readonly product?: string
  readonly state?: GpuHealth["state"]
  readonly seen?: Date
}): KnownGpu => ({
  uuid: options.uuid,
  node: options.node,
  machine: `i-${options.node}`,
  providerId: `aws:///us-east-1a/i-${options.node}`,
  pod: { namespace: "gpu-operator", name: `nvidia-device-plugin-${options.node}` },
  gpu: {
    index: options.index,
    uuid: options.uuid,
    ...(options.serial === undefined ? {} : { serial: options.serial }),
    product: options.product ?? "NVIDIA H100 80GB HBM3",
    pciBusId: `00000000:${String(options.index + 10).padStart(2, "0")}:00.0`,
    moduleId: options.index + 1,
    ...(options.chassis === undefined ? {} : { platform: { chassisSerial: options.chassis } }),
  },
  driverVersion: "570.86.15",
  cudaVersion: "12.8",
  serialShared: false,
  ...(options.state === undefined
    ? {}
    : {
        health: {
          state: options.state,
          reasons: options.state === "ok" ? [] : ["ecc-uncorrectable"],
          rmaEligible: false,
        },
      }),
  firstSeen: t0,
  lastSeen: options.seen ?? t0,
  lastReported: options.seen ?? t0,
})

/** An exported event of a GPU. */
export const eventOf = (
  known: KnownGpu,
  event: GpuRecord["event"],
  time: Date,
  extra: Partial<GpuRecord> = {},
): InventoryEvent => ({
  record: {
    schema: "gpu-serials/v1",
    event,
    id: `${known.uuid}-${event}-${time.getTime()}`,
    cluster: "test",
    node: known.node,
    machine: known.machine,
    source: `${known.pod.namespace}/${known.pod.name}`,
    chassis: known.gpu.platform?.chassisSerial ?? "",
    gpu: known.gpu.serial ?? "",
    time: time.toISOString(),
    uuid: known.uuid,
    index: known.gpu.index,
    serialShared: false,
    ...(known.health === undefined ? {} : { health: known.health }),
    ...extra,
  },
  origin: {},
})
