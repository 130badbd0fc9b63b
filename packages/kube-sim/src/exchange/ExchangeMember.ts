import type { Fleet } from "../catalog/Fleet.ts"
import type { GpuIdentity, SimulatedHost } from "../catalog/SimulatedHost.ts"
import type { BoardPlace } from "../ledger/BoardPlace.ts"

/** What a simulated cluster lends its board exchange: its hosts, its ledger and its device-plugin pods. */
export interface ExchangeMember {
  readonly cluster: string
  readonly fleet: Fleet
  /** The cluster's `crossClusterSwapsPerMinute` now: swaps it starts with another cluster, per minute. */
  swapsPerMinute(): number
  /** Writes a board's departure to another cluster into the cluster's ledger. */
  recordDeparture(host: SimulatedHost, identity: GpuIdentity, swap: number, to: BoardPlace, time: Date): void
  /** Writes a board's arrival from another cluster into the cluster's ledger. */
  recordArrival(host: SimulatedHost, identity: GpuIdentity, swap: number, from: BoardPlace, time: Date): void
  /** The host's boards changed: its device-plugin pod restarts (or, with none now, the next one reads them). */
  boardsChanged(host: SimulatedHost): void
}
