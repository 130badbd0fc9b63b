import type { JetStreamClient } from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { StoredClusterGpu } from "../../domain/ClusterObservation.ts"
import { knownGpuOf, parseLocatedGpu } from "../../domain/GpuLocation.ts"
import type { GpuPlace } from "../../domain/HubFleetChange.ts"
import { SharedValues } from "../../fleet/SharedValues.ts"

/** The hub's KV bucket could not be read in time. */
export class HubInventoryError extends Schema.TaggedError<HubInventoryError>()("HubInventoryError", {
  bucket: Schema.String,
  /** Short and user-facing; never a raw payload. */
  message: Schema.String,
}) {}

/** Keys read at once: a fleet of 100,000 GPUs is as many keys. */
const readConcurrency = 256
/** The whole read, every key of a large fleet included. */
export const inventoryReadTimeout = Duration.minutes(1)

/** Every cluster's `<cluster>.uuid.<uuid>` keys, as the nats exporter's inventory store writes them. */
const everyClusterUuidKeys = "*.uuid.*"

/** Every cluster's GPUs the hub's KV bucket holds, and how many values could not be decoded. */
export interface StoredFleet {
  readonly gpus: ReadonlyArray<StoredClusterGpu>
  readonly skipped: number
}

/**
 * Of two clusters' entries of one GPU (a move across clusters whose removal is not written yet), the
 * one in the cluster the hub's last record placed it in, else the one seen last.
 */
const preferred = (kept: StoredClusterGpu, found: StoredClusterGpu, place: GpuPlace | undefined): StoredClusterGpu => {
  if (place?.cluster === found.cluster) return found
  if (place?.cluster === kept.cluster) return kept
  return found.known.lastSeen > kept.known.lastSeen ? found : kept
}

/**
 * Reads every cluster's GPUs from the hub's KV bucket (`bucket`, sourcing each cluster's inventory
 * bucket) once, a bounded number of keys at a time, within `timeout`. A value the inventory store's
 * encoding does not decode is skipped and counted; `places` (the hub's state) picks the cluster of a GPU
 * two clusters hold.
 */
export const readStoredFleet = (
  js: JetStreamClient,
  bucket: string,
  places: ReadonlyMap<string, GpuPlace>,
  timeout: Duration.Duration = inventoryReadTimeout,
): Effect.Effect<StoredFleet, HubInventoryError> =>
  Effect.tryPromise({
    try: async (signal) => {
      const kv = await new Kvm(js).open(bucket)
      const keys: Array<string> = []
      for await (const key of await kv.keys(everyClusterUuidKeys)) {
        if (signal.aborted) break
        keys.push(key)
      }
      const values = new SharedValues({ names: 100_000, times: 4096 })
      const gpus = new Map<string, StoredClusterGpu>()
      let skipped = 0
      for (let start = 0; start < keys.length && !signal.aborted; start += readConcurrency) {
        const entries = await Promise.all(keys.slice(start, start + readConcurrency).map((key) => kv.get(key)))
        for (const entry of entries) {
          if (entry === null || entry.operation !== "PUT") continue
          const located = parseLocatedGpu(entry.string())
          if (located === undefined) {
            skipped++
            continue
          }
          const found: StoredClusterGpu = {
            cluster: values.text(located.cluster),
            known: knownGpuOf(located, values),
            since: values.time(located.since),
          }
          const kept = gpus.get(located.uuid)
          gpus.set(located.uuid, kept === undefined ? found : preferred(kept, found, places.get(located.uuid)))
        }
      }
      return { gpus: [...gpus.values()], skipped }
    },
    catch: (cause) =>
      new HubInventoryError({ bucket, message: cause instanceof Error ? cause.message : String(cause) }),
  }).pipe(
    Effect.timeout(timeout),
    Effect.catchTag("TimeoutError", () =>
      Effect.fail(new HubInventoryError({ bucket, message: `not read within ${Duration.format(timeout)}` })),
    ),
  )
