import type * as Effect from "effect/Effect"
import type { GpuRecord } from "./GpuRecord.ts"

/**
 * What a hub's receiver hands to its processor: a batch of one cluster's records in the order its stream
 * holds them, or the news that a cluster is alive (its heartbeat). The batch carries how to acknowledge
 * it: the processor runs `acknowledge` once the batch's events are handed over and its store is written,
 * so a batch the hub did not finish is delivered again, and the records' ids make a repeat harmless.
 */
export type ClusterObservation =
  | {
      readonly _tag: "ClusterRecords"
      readonly cluster: string
      readonly records: ReadonlyArray<GpuRecord>
      /** When the receiver took the batch. */
      readonly time: Date
      readonly acknowledge: Effect.Effect<void>
    }
  | {
      readonly _tag: "ClusterHeartbeat"
      readonly cluster: string
      /** When the cluster's service sent it. */
      readonly time: Date
      readonly acknowledge: Effect.Effect<void>
    }
