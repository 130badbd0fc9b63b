import { writeHeapSnapshot } from "node:v8"
import type { GpuRecord } from "../src/domain/GpuRecord.ts"
import type { InventoryEventKind } from "../src/domain/InventoryEventKind.ts"
import { FleetView } from "../src/fleet/FleetView.ts"
import {
  hubClusters as clusters,
  gpuOf,
  hubGpusPerCluster as gpusPerCluster,
  gpusPerNode,
  hubRecord,
} from "./HubFleetRecords.ts"
import { liveHeap } from "./LiveHeap.ts"

/**
 * The hub's fleet view alone, as `npm run bench -- hub` fills it: 100 clusters × 1,000 GPUs (125 nodes × 8),
 * each record decoded from its own JSON (strings of its own, as the hub's receiver reads them), handed to
 * `follow` and `record` in batches of 500: every GPU `added`, then `observed`. Prints the live heap the view
 * holds after a full GC, per GPU, and with `--snapshot <file>` writes a heap snapshot of it.
 *
 *   node bench/FleetViewMemory.ts [--snapshot /tmp/fleet-view.heapsnapshot]
 */
const batch = 500

/** One record as the hub's receiver hands it on: parsed from the JSON a cluster wrote. */
const decodedRecord = (cluster: number, at: number, minute: number, event: InventoryEventKind): GpuRecord => {
  const node = Math.floor(at / gpusPerNode)
  const record = hubRecord(gpuOf(cluster, at), cluster, node, minute, event)
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
