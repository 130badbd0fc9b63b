import type { KV } from "@nats-io/kv"
import * as Effect from "effect/Effect"
import { type GpuLocation, locationOf, parseGpuLocation, parseLocatedGpu } from "../../domain/GpuLocation.ts"
import { currentValues } from "./GpuLocationBucket.ts"
import { serialKeys, uuidKeys } from "./GpuLocationKey.ts"

/**
 * Where the GPU with this uuid, or every GPU with this serial, is now: one location per GPU and
 * cluster, in cluster then uuid order. A serial shared by two GPUs (GB200) gives two. Every cluster
 * of the bucket is searched unless `cluster` names one. Entries that do not parse (written by another
 * layout or program) are left out.
 */
export const locate = (kv: KV, bucket: string, serialOrUuid: string, cluster?: string) =>
  Effect.gen(function* () {
    const byUuid = yield* currentValues(kv, bucket, uuidKeys(cluster, serialOrUuid))
    const bySerial = yield* currentValues(kv, bucket, serialKeys(cluster, serialOrUuid))
    const found = new Map<string, GpuLocation>()
    const keep = (location: GpuLocation) => found.set(`${location.cluster}\u0000${location.uuid}`, location)
    for (const entry of bySerial) {
      const location = parseGpuLocation(entry.value)
      if (location !== undefined) keep(location)
    }
    for (const entry of byUuid) {
      const located = parseLocatedGpu(entry.value)
      if (located !== undefined) keep(locationOf(located))
    }
    return [...found.values()].sort((a, b) => a.cluster.localeCompare(b.cluster) || a.uuid.localeCompare(b.uuid))
  })
