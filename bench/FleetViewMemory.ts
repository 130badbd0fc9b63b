import { writeHeapSnapshot } from "node:v8"
import type { Gpu } from "../src/domain/Gpu.ts"
import type { GpuRecord } from "../src/domain/GpuRecord.ts"
import { gpuRecord } from "../src/domain/GpuRecordBuilder.ts"
import type { InventoryEventKind } from "../src/domain/InventoryEventKind.ts"
import { FleetView } from "../src/fleet/FleetView.ts"
import { liveHeap } from "./LiveHeap.ts"

/**
 * The hub's fleet view alone, as `npm run bench -- hub` fills it: 100 clusters × 1,000 GPUs (125 nodes × 8),
 * each record decoded from its own JSON (strings of its own, as the hub's receiver reads them), handed to
 * `follow` and `record` in batches of 500: every GPU `added`, then `observed`. Prints the live heap the view
 * holds after a full GC, per GPU, and with `--snapshot <file>` writes a heap snapshot of it.
 *
 *   node bench/FleetViewMemory.ts [--snapshot /tmp/fleet-view.heapsnapshot]
 */
const clusters = 100
const gpusPerCluster = 1_000
const gpusPerNode = 8
const batch = 500
const startMinute = Math.floor(Date.now() / 60_000) - 10

const clusterName = (cluster: number): string => `c${String(cluster).padStart(3, "0")}`

const gpuOf = (cluster: number, at: number): Gpu => {
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

/** One record as the hub's receiver hands it on: parsed from the JSON a cluster wrote. */
const decodedRecord = (cluster: number, at: number, minute: number, event: InventoryEventKind): GpuRecord => {
  const node = Math.floor(at / gpusPerNode)
  const record = gpuRecord({
    gpu: gpuOf(cluster, at),
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
  return JSON.parse(JSON.stringify(record)) as GpuRecord
}

/** Every GPU's record of one minute, cluster after cluster, in batches as the hub's consumer fetches them. */
const feed = (view: FleetView, minute: number, event: InventoryEventKind): void => {
  let records: Array<GpuRecord> = []
  const hand = () => {
    view.follow(records)
    view.record(records.map((record) => ({ record, origin: {} })))
    records = []
  }
  for (let cluster = 0; cluster < clusters; cluster++) {
    for (let at = 0; at < gpusPerCluster; at++) {
      records.push(decodedRecord(cluster, at, minute, event))
      if (records.length === batch) hand()
    }
  }
  if (records.length > 0) hand()
}

const megabytes = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1)

const gpus = clusters * gpusPerCluster
const before = liveHeap()
const view = new FleetView({ eventCapacity: 1000, acrossClusters: true })
feed(view, 0, "added")
const added = liveHeap() - before
feed(view, 1, "observed")
// Reads settle the indexes and build the list order, as the page's first request does.
view.orderedGpus()
view.bySerial.size
view.byUuid.size
view.byNode.size
view.byChassis.size
const observed = liveHeap() - before
console.log(`fleet view, ${gpus.toLocaleString("en")} GPUs across ${clusters} clusters (history full at its bound):`)
console.log(`  after added: ${megabytes(added)} MB live heap, ${(added / gpus).toFixed(0)} bytes per GPU`)
console.log(`  after observed and reads: ${megabytes(observed)} MB, ${(observed / gpus).toFixed(0)} bytes per GPU`)
const at = process.argv.indexOf("--snapshot")
if (at !== -1) {
  const file = writeHeapSnapshot(process.argv[at + 1])
  console.log(`  heap snapshot: ${file}`)
}
// Held to the end, so the collections above count it.
if (view.gpus.size !== gpus) throw new Error(`the view holds ${view.gpus.size} GPUs, not ${gpus}`)
