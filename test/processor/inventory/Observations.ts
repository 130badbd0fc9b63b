import type { Gpu } from "../../../src/domain/Gpu.ts"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import type { InventoryEventKind } from "../../../src/domain/InventoryEventKind.ts"
import type { NodeObservation, NodeRef, PodRef } from "../../../src/domain/NodeObservation.ts"
import type { GpuFailure, NodeReading } from "../../../src/domain/NodeReading.ts"
import type { InventoryRules } from "../../../src/processor/inventory/Inventory.ts"
import { empty, type Inventory, tick, transition } from "../../../src/processor/inventory/Inventory.ts"

export const minute = 60_000
export const hour = 60 * minute

export const settings: InventoryRules = {
  cluster: "prod-eu",
  reportIntervalMs: hour,
  removalGraceMs: 5 * minute,
}

const epoch = Date.UTC(2026, 0, 15, 8, 0, 0)

/** A time `offsetMs` after a fixed start. */
export const at = (offsetMs: number): Date => new Date(epoch + offsetMs)

export const nodeA: NodeRef = { name: "gpu-node-a", uid: "uid-a", providerId: "aws:///eu-west-1a/i-0aaa" }
export const nodeB: NodeRef = { name: "gpu-node-b", uid: "uid-b", providerId: "aws:///eu-west-1b/i-0bbb" }

export const podOf = (node: NodeRef, suffix = "x1"): PodRef => ({
  namespace: "gpu-operator",
  name: `nvidia-device-plugin-daemonset-${node.name}-${suffix}`,
})

/** An H100 of an 8-GPU host: distinct UUID, serial and PCI bus id per host and index. */
export const h100 = (host: string, index: number): Gpu => ({
  index,
  uuid: `GPU-${host}-${String(index).padStart(2, "0")}-0000-0000-000000000000`,
  serial: `0${[...host].reduce((sum, char) => sum * 31 + char.charCodeAt(0), 0) % 1_000_000}${index}`,
  product: "NVIDIA H100 80GB HBM3",
  pciBusId: `00000000:${(0x18 + index * 0x10).toString(16).toUpperCase()}:00.0`,
  migMode: "Disabled",
})

export const hostGpus = (host: string, count = 8): ReadonlyArray<Gpu> =>
  Array.from({ length: count }, (_, index) => h100(host, index))

export interface ReadOptions {
  readonly pod?: PodRef
  readonly failures?: ReadonlyArray<GpuFailure>
  readonly attachedGpus?: number
  readonly driverVersion?: string
}

export const reading = (gpus: ReadonlyArray<Gpu>, options: ReadOptions = {}): NodeReading => ({
  gpus,
  driverVersion: options.driverVersion ?? "570.148.08",
  cudaVersion: "12.8",
  failures: options.failures ?? [],
  format: "xml",
  ...(options.attachedGpus === undefined ? {} : { attachedGpus: options.attachedGpus }),
})

export const read = (
  node: NodeRef,
  time: Date,
  gpus: ReadonlyArray<Gpu>,
  options: ReadOptions = {},
): NodeObservation => ({
  _tag: "NodeRead",
  node,
  pod: options.pod ?? podOf(node),
  time,
  reading: reading(gpus, options),
})

export const failed = (node: NodeRef, time: Date, pod: PodRef = podOf(node)): NodeObservation => ({
  _tag: "NodeReadFailed",
  node,
  pod,
  time,
  failure: { kind: "driver-not-loaded", message: "NVIDIA driver is not loaded" },
})

export const gone = (
  node: NodeRef,
  time: Date,
  reason: "pod-deleted" | "node-deleted" = "pod-deleted",
): NodeObservation => ({ _tag: "NodeGone", node, time, reason })

/** The receiver's first list of the cluster: its nodes, and those of them with a device-plugin pod. */
export const listed = (
  time: Date,
  nodes: ReadonlyArray<NodeRef>,
  withPod: ReadonlyArray<NodeRef> = nodes,
): NodeObservation => ({
  _tag: "ClusterListed",
  time,
  nodes: new Set(nodes.map((node) => node.name)),
  nodesWithPod: new Set(withPod.map((node) => node.name)),
})

/** A step of a scenario: an observation, or time passing to `now`. */
export type Step = NodeObservation | { readonly _tag: "Tick"; readonly now: Date }

export const tickAt = (now: Date): Step => ({ _tag: "Tick", now })

/** Applies steps in order; the inventory after them and every event they caused. */
export const run = (
  steps: ReadonlyArray<Step>,
  options: { readonly from?: Inventory; readonly settings?: InventoryRules } = {},
): { readonly state: Inventory; readonly events: ReadonlyArray<InventoryEvent> } => {
  let state = options.from ?? empty
  const events: Array<InventoryEvent> = []
  for (const step of steps) {
    const next =
      step._tag === "Tick"
        ? tick(state, step.now, options.settings ?? settings)
        : transition(state, step, options.settings ?? settings)
    state = next.state
    events.push(...next.events)
  }
  return { state, events }
}

export const kinds = (events: ReadonlyArray<InventoryEvent>): ReadonlyArray<InventoryEventKind> =>
  events.map((event) => event.record.event)

export const ofKind = (events: ReadonlyArray<InventoryEvent>, kind: InventoryEventKind) =>
  events.filter((event) => event.record.event === kind)
