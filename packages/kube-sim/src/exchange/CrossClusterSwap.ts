import type { BoardPlace } from "../ledger/BoardPlace.ts"

/** One board's move between clusters: where it left and where it arrived. */
export interface BoardCrossing {
  readonly uuid: string
  readonly serial: string
  readonly from: BoardPlace
  readonly to: BoardPlace
}

/**
 * A swap between two clusters of an exchange: the boards of one slot (a GB200 module's two GPUs) of a
 * node in each trade places, so every board in it crosses. Both clusters' ledgers record it with this
 * `swap` number and `time`.
 */
export interface CrossClusterSwap {
  /** From 1, in the order the exchange made them. */
  readonly swap: number
  /** RFC 3339 with milliseconds. */
  readonly time: string
  readonly boards: ReadonlyArray<BoardCrossing>
}
