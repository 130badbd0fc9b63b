import { writeHeapSnapshot } from "node:v8"
import * as Result from "effect/Result"
import { Fleet } from "../packages/kube-sim/src/catalog/Fleet.ts"
import { runNvidiaSmi } from "../packages/kube-sim/src/nvidia-smi/NvidiaSmi.ts"
import type { NodeObservation } from "../src/domain/NodeObservation.ts"
import { FleetView } from "../src/fleet/FleetView.ts"
import { xmlQueryArgv } from "../src/nvsmi/Command.ts"
import { parseNvsmiOutput } from "../src/nvsmi/NvsmiOutput.ts"
import { empty, type Inventory, type InventoryRules, transition } from "../src/processor/inventory/Inventory.ts"
import { SharedGpuFacts } from "../src/processor/inventory/SharedGpuFacts.ts"
import { SharedVerdicts } from "../src/processor/inventory/SharedVerdicts.ts"
import { NodeGpuMirror } from "../src/receiver/kube/nodelabels/NodeGpuMirror.ts"
import { liveHeap } from "./LiveHeap.ts"

/**
 * What the service holds per GPU at the end of the pipeline bench's initial sync, in this process: the
 * simulated fleet of `npm run bench -- pipeline --nodes 10000` (same seed and model mix), each node's
 * `nvidia-smi -q -x` parsed by the service's parser, handed to the inventory's `transition` one node at a
 * time; its changes go to the fleet view and the node labeller's mirror, its events to the view's ring
 * and histories, as the pipeline wires them. Prints the live heap after a full GC of each holder, counted
 * as what is freed when it is let go (the view first, then the mirror, then the inventory, which holds
 * the GPU entries they share), and with `--snapshot <file>` writes a heap snapshot before.
 *
 *   node bench/SyncMemory.ts [--nodes 10000] [--snapshot /tmp/sync.heapsnapshot]
 */
const args = process.argv.slice(2)
const flag = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined)
const nodes = Number(flag("--nodes") ?? 10_000)
const cluster = "bench"
/** The pipeline bench's mix: healthy models only, so every node gives records. */
const benchModelMix = { "h100-hgx": 30, "gb200-nvl72": 10, "a100-mig": 15, t4: 20, l40s: 15, rtx4090: 5 }
const settings: InventoryRules = {
  cluster,
  reportIntervalMs: 3_600_000,
  removalGraceMs: 300_000,
  verdicts: new SharedVerdicts(512),
  facts: new SharedGpuFacts(1024),
}

const megabytes = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1)

const fleet = Fleet.generate({ nodes, modelMix: benchModelMix, seed: `bench-${nodes}`, clusterName: cluster })
const hosts = [...fleet.hosts.values()]
const start = Date.UTC(2026, 0, 1)

/** One node's reading as the receiver hands it on: its own output, parsed. */
const observationOf = (at: number): NodeObservation | undefined => {
  const host = hosts[at]
  if (host === undefined) return undefined
  const time = new Date(start + at * 5)
  const output = runNvidiaSmi(host, xmlQueryArgv.slice(1), time).stdout.toBuffer()
  const reading = parseNvsmiOutput(output)
  if (Result.isFailure(reading)) return undefined
  const node = host.machine.nodeName
  return {
    _tag: "NodeRead",
    node: { name: node, uid: host.machine.systemUuid, providerId: host.machine.providerId },
    pod: { namespace: "gpu-operator", name: `nvidia-device-plugin-daemonset-${node.slice(-5)}` },
    time,
    reading: reading.success,
  }
}

/** The service's holders of GPUs after the sync; kept in an object, so each can be let go apart. */
interface Holders {
  inventory?: Inventory
  view?: FleetView
  mirror?: NodeGpuMirror
}

const sync = (): Holders => {
  let inventory = empty
  const view = new FleetView({ eventCapacity: 1000, cluster })
  const mirror = new NodeGpuMirror()
  for (let at = 0; at < hosts.length; at++) {
    const observation = observationOf(at)
    if (observation === undefined) continue
    const next = transition(inventory, observation, settings)
    inventory = next.state
    view.apply(next.changes)
    mirror.apply(next.changes)
    view.observe(observation)
    view.record(next.events)
  }
  // The page's first requests settle the indexes and build the list order.
  view.orderedGpus()
  for (const index of [view.bySerial, view.byUuid, view.byNode, view.byChassis]) index.size
  return { inventory, view, mirror }
}

const holders = sync()
const gpus = holders.view?.gpus.size ?? 0
const held = liveHeap()
const snapshot = flag("--snapshot")
if (snapshot !== undefined) writeHeapSnapshot(snapshot)
delete holders.view
const withoutView = liveHeap()
delete holders.mirror
const withoutMirror = liveHeap()
delete holders.inventory
const none = liveHeap()
const perGpu = (bytes: number): string => `${megabytes(bytes)} MB, ${(bytes / gpus).toFixed(0)} bytes per GPU`
console.log(`the end of a ${nodes.toLocaleString("en")}-node sync, ${gpus.toLocaleString("en")} GPUs, live heap:`)
console.log(`  inventory, fleet view and labeller's mirror: ${perGpu(held - none)}`)
console.log(`  the fleet view: ${perGpu(held - withoutView)}`)
console.log(`  the labeller's mirror: ${perGpu(withoutView - withoutMirror)}`)
console.log(`  the inventory (the GPU entries the others share included): ${perGpu(withoutMirror - none)}`)
