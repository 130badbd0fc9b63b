import type { Gpu } from "../src/domain/Gpu.ts"
import type { NodeObservation } from "../src/domain/NodeObservation.ts"
import type { InventoryRules } from "../src/processor/inventory/Inventory.ts"
import { empty, type Inventory, inventorySnapshot, tick, transition } from "../src/processor/inventory/Inventory.ts"
import { liveHeap } from "./LiveHeap.ts"

const nodes = 10_000
const gpusPerNode = 8
const settings: InventoryRules = { cluster: "bench", reportIntervalMs: 3_600_000, removalGraceMs: 300_000 }
const start = Date.UTC(2026, 0, 1)

/** A fresh reading of one 8-GPU node, as the receiver hands it over: new objects each time. */
const readingOf = (node: number, time: Date): NodeObservation => {
  const name = `ip-10-16-${node >> 8}-${node & 0xff}.ec2.internal`
  const gpus: Array<Gpu> = Array.from({ length: gpusPerNode }, (_, index) => ({
    index,
    uuid: `GPU-${String(node).padStart(8, "0")}-0000-4000-8000-${String(index).padStart(12, "0")}`,
    serial: `16529${String(node * gpusPerNode + index).padStart(8, "0")}`,
    product: "NVIDIA H100 80GB HBM3",
    pciBusId: `00000000:${(0x18 + index * 0x10).toString(16).toUpperCase()}:00.0`,
    moduleId: index + 1,
    migMode: "Disabled",
  }))
  return {
    _tag: "NodeRead",
    node: { name, uid: `uid-${node}`, providerId: `aws:///us-east-1a/i-0${String(node).padStart(16, "0")}` },
    pod: { namespace: "gpu-operator", name: `nvidia-device-plugin-daemonset-${node}` },
    time,
    reading: { gpus, driverVersion: "570.86.15", cudaVersion: "12.8", failures: [], format: "xml" },
  }
}

/** Applies one reading of every node at `time`; the inventory after them and the CPU time per transition. */
const round = (state: Inventory, time: Date): { readonly state: Inventory; readonly microseconds: number } => {
  const observations = Array.from({ length: nodes }, (_, node) => readingOf(node, time))
  let current = state
  const cpuBefore = process.cpuUsage()
  for (const observation of observations) current = transition(current, observation, settings).state
  const cpu = process.cpuUsage(cpuBefore)
  return { state: current, microseconds: (cpu.user + cpu.system) / nodes }
}

/**
 * The inventory's memory and CPU at fleet scale, in this process: live heap per GPU held (after a full
 * GC, the parsed GPUs included), and CPU per transition for the initial sync (every GPU `added`), a
 * steady round (every GPU unchanged) and one tick that reports every GPU.
 */
export const inventoryBench = (): ReadonlyArray<string> => {
  const before = liveHeap()
  const added = round(empty, new Date(start))
  const held = liveHeap()
  const steady = round(added.state, new Date(start + 60_000))
  const cpuBefore = process.cpuUsage()
  const reported = tick(steady.state, new Date(start + 2 * 3_600_000), settings)
  const tickCpu = process.cpuUsage(cpuBefore)
  const snapshot = inventorySnapshot(reported.state)
  const gpus = nodes * gpusPerNode
  return [
    `inventory: ${nodes} nodes × ${gpusPerNode} GPUs held in this process (${snapshot.gpus} GPUs known)`,
    `  live heap: ${((held - before) / gpus).toFixed(0)} bytes per GPU held (parsed GPU included; after a full GC)`,
    `  CPU per transition: ${added.microseconds.toFixed(1)} µs for a reading adding 8 GPUs, ${steady.microseconds.toFixed(1)} µs for one of 8 unchanged GPUs`,
    `  tick re-affirming every GPU: ${((tickCpu.user + tickCpu.system) / 1000).toFixed(0)} ms (${reported.events.length} events)`,
  ]
}
