import type { GpuRecord } from "../src/domain/GpuRecord.ts"
import { defaultHistoryEntries, FleetView } from "../src/fleet/FleetView.ts"
import { liveHeap } from "./LiveHeap.ts"

/** The fleet page's own history at its bound: the entries it holds then, of how many GPUs, in how many bytes. */
export interface FleetHistoryAtBound {
  readonly entries: number
  readonly gpus: number
  readonly megabytes: number
}

/**
 * Fills a fleet view's history (the fleet page's record of what this process saw) to its bound with the
 * history events of `records` (added, moved, removed, health) replayed over and over, each round as new
 * GPUs and with strings of its own, as churn brings them, until half as many again as the bound went in;
 * then its live heap after a full GC. A soak ends long before a churning fleet fills the history: this is
 * what it holds once full, where it stays.
 */
export const fleetHistoryAtBound = (records: ReadonlyArray<GpuRecord>): FleetHistoryAtBound => {
  const history = records.filter((record) => ["added", "moved", "removed", "health"].includes(record.event))
  if (history.length === 0) return { entries: 0, gpus: 0, megabytes: 0 }
  const lines = history.map((record) => JSON.stringify(record))
  const before = liveHeap()
  const view = new FleetView({ eventCapacity: 0 })
  const rounds = Math.ceil((defaultHistoryEntries * 1.5) / lines.length)
  for (let round = 0; round < rounds; round++) {
    for (const line of lines) {
      const record = JSON.parse(line) as GpuRecord
      view.record([{ record: { ...record, uuid: `${record.uuid}-${round}` }, origin: {} }])
    }
  }
  const megabytes = (liveHeap() - before) / 1024 / 1024
  const held = new Set<string>()
  let entries = 0
  for (let round = 0; round < rounds; round++) {
    for (const record of history) {
      const uuid = `${record.uuid}-${round}`
      const kept = held.has(uuid) ? undefined : view.history(uuid)
      held.add(uuid)
      entries += kept?.entries.length ?? 0
    }
  }
  let gpus = 0
  for (const uuid of held) if (view.history(uuid) !== undefined) gpus++
  return { entries, gpus, megabytes }
}
