import type * as Effect from "effect/Effect"
import type { GpuRecord } from "./GpuRecord.ts"
import type { HubFleetChange, HubFleetSnapshot } from "./HubFleetChange.ts"
import type { KnownGpu } from "./KnownGpu.ts"

/**
 * Runs once the processor has handed the observation's events over: writes the processor's changes to
 * the hub's store, then acknowledges what the observation came from, so that an observation the hub did
 * not finish is delivered again (the records' ids make a repeat harmless).
 */
export type Acknowledge = (changes: ReadonlyArray<HubFleetChange>) => Effect.Effect<void>

/** A cluster's heartbeat as the hub read it from its stream. */
export interface HeartbeatHeard {
  readonly cluster: string
  /** When the cluster's service sent it. */
  readonly sentAt: Date
}

/** A GPU as its cluster's inventory store last wrote it, in the hub's KV bucket, read once at the hub's start. */
export interface StoredClusterGpu {
  readonly cluster: string
  readonly known: KnownGpu
  /** When it arrived on its node and machine. */
  readonly since: Date
}

/**
 * What a hub's receiver hands to its processor: first what the hub's store held and the clusters it
 * listens to, then each batch it fetched from the hub stream, whole: the records of every cluster in the
 * stream's order (so each cluster's in that cluster's order) and the clusters' heartbeats, acknowledged
 * once for the batch.
 */
export type ClusterObservation =
  | {
      readonly _tag: "FleetRestored"
      /** The clusters of the config (names = JetStream domains), each expected to be heard of. */
      readonly clusters: ReadonlyArray<string>
      readonly snapshot: HubFleetSnapshot
      /** Every cluster's GPUs in the hub's KV bucket, for the fleet page; empty when it could not be read. */
      readonly stored: ReadonlyArray<StoredClusterGpu>
      readonly time: Date
    }
  | {
      readonly _tag: "ClusterBatch"
      readonly records: ReadonlyArray<GpuRecord>
      readonly heartbeats: ReadonlyArray<HeartbeatHeard>
      /** When the receiver took the batch. */
      readonly time: Date
      readonly acknowledge: Acknowledge
    }
