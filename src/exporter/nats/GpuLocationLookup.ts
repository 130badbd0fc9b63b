import type { KV } from "@nats-io/kv"
import { Effect } from "effect"
import { type GpuLocation, locationOf, parseGpuLocation, parseLocatedGpu } from "./GpuLocation.ts"
import { currentValues, kvCall } from "./GpuLocationBucket.ts"
import { serialKeys, uuidKey } from "./GpuLocationKey.ts"

/**
 * Where the GPU with this uuid, or every GPU with this serial, is now: one location per GPU, in
 * uuid order. A serial shared by two GPUs (GB200) gives two.
 */
export const locate = (kv: KV, bucket: string, serialOrUuid: string) =>
  Effect.gen(function* () {
    const byUuid = yield* kvCall(bucket, "get uuid", () => kv.get(uuidKey(serialOrUuid)))
    const bySerial = yield* currentValues(kv, bucket, serialKeys(serialOrUuid))
    const found = new Map<string, GpuLocation>()
    for (const entry of bySerial) {
      const location = parseGpuLocation(entry.value)
      if (location !== undefined) found.set(location.uuid, location)
    }
    const located = byUuid?.operation === "PUT" ? parseLocatedGpu(byUuid.string()) : undefined
    if (located !== undefined) found.set(located.uuid, locationOf(located))
    return [...found.values()].sort((a, b) => a.uuid.localeCompare(b.uuid))
  })
