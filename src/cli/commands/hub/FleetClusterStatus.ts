import { JetStreamApiCodes, JetStreamApiError, type JetStreamManager } from "@nats-io/jetstream"
import type { KV } from "@nats-io/kv"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { decodeKeyToken } from "../../../exporter/nats/GpuLocationKey.ts"
import { encodeSubjectToken } from "../../../exporter/nats/NatsSubject.ts"
import { defectMessage } from "../../../log/ShortMessage.ts"
import { sourceStates } from "../../../receiver/nats/HubSources.ts"

/** One cluster as the hub sees it. */
export interface FleetClusterStatus {
  readonly cluster: string
  /** When the hub stream last received anything of the cluster (a record or a heartbeat); absent: never. */
  readonly lastHeard?: string
  /** Messages of the cluster's stream the hub stream has yet to copy; absent: the hub does not source it. */
  readonly sourceLag?: number
  /** Milliseconds since the hub stream's source last had contact with the cluster's stream; absent: never. */
  readonly sourceActiveMsAgo?: number
  /** GPUs of the cluster in the hub's KV bucket. */
  readonly gpus: number
}

/** What the hub's stream or bucket answered could not be read. */
export class FleetStatusError extends Schema.TaggedError<FleetStatusError>()("FleetStatusError", {
  message: Schema.String,
}) {}

const callTimeout = Duration.seconds(10)
/** Listing every key of a fleet's bucket (100,000 GPUs are as many keys). */
const keysTimeout = Duration.minutes(1)

const call = <A>(what: string, run: () => Promise<A>, timeout: Duration.Duration = callTimeout) =>
  Effect.tryPromise({
    try: run,
    catch: (cause) => new FleetStatusError({ message: `${what}: ${defectMessage(cause)}` }),
  }).pipe(
    Effect.timeout(timeout),
    Effect.catchTag("TimeoutError", () =>
      Effect.fail(new FleetStatusError({ message: `${what}: no answer within ${Duration.format(timeout)}` })),
    ),
  )

const isNotFound = (cause: unknown): boolean =>
  cause instanceof JetStreamApiError &&
  (cause.code === JetStreamApiCodes.NoMessageFound || cause.code === JetStreamApiCodes.StreamNotFound)

/** GPUs per cluster: the `<cluster>.uuid.<uuid>` keys of the bucket, grouped by their cluster token. */
const gpuCounts = (kv: KV, bucket: string) =>
  call(
    `KV bucket ${bucket}`,
    async () => {
      const counts = new Map<string, number>()
      for await (const key of await kv.keys("*.uuid.*")) {
        const cluster = decodeKeyToken(key.slice(0, key.indexOf(".")))
        if (cluster !== undefined) counts.set(cluster, (counts.get(cluster) ?? 0) + 1)
      }
      return counts
    },
    keysTimeout,
  )

/** The time of the hub stream's newest message of `cluster` under `prefix`; undefined when it has none. */
const lastHeard = (manager: JetStreamManager, stream: string, prefix: string, cluster: string) =>
  Effect.tryPromise({
    try: () => manager.streams.getMessage(stream, { last_by_subj: `${prefix}.${encodeSubjectToken(cluster)}.>` }),
    catch: (cause) => cause,
  }).pipe(
    Effect.timeout(callTimeout),
    Effect.map((message) => message?.time.toISOString()),
    Effect.catch((cause) =>
      isNotFound(cause)
        ? Effect.succeed(undefined)
        : Effect.fail(new FleetStatusError({ message: `hub stream ${stream}: ${defectMessage(cause)}` })),
    ),
  )

/**
 * Every cluster the hub sources or holds GPUs of, by name: when it was last heard (the hub stream's
 * newest message under the clusters' subject prefix), its source's lag and last contact (the hub
 * stream's info), and its GPUs (the keys of the hub's bucket). Fails when the hub stream does not exist.
 */
export const fleetClusterStatus = Effect.fnUntraced(function* (
  manager: JetStreamManager,
  kv: KV,
  options: { readonly stream: string; readonly bucket: string; readonly subjectPrefix: string },
) {
  const sources = yield* sourceStates(manager, options.stream).pipe(
    Effect.mapError(
      (error) =>
        new FleetStatusError({
          message: /stream not found/i.test(error.message)
            ? `hub stream ${options.stream} not found: is this a hub's NATS?`
            : `hub stream ${options.stream}: ${error.message}`,
        }),
    ),
  )
  const gpus = yield* gpuCounts(kv, options.bucket)
  const clusters = [...new Set([...sources.keys(), ...gpus.keys()])].sort((a, b) => a.localeCompare(b))
  return yield* Effect.forEach(
    clusters,
    (cluster) =>
      Effect.map(lastHeard(manager, options.stream, options.subjectPrefix, cluster), (heard): FleetClusterStatus => {
        const source = sources.get(cluster)
        return {
          cluster,
          ...(heard === undefined ? {} : { lastHeard: heard }),
          ...(source === undefined ? {} : { sourceLag: source.lag }),
          ...(source?.sinceActiveMs === undefined ? {} : { sourceActiveMsAgo: Math.round(source.sinceActiveMs) }),
          gpus: gpus.get(cluster) ?? 0,
        }
      }),
    { concurrency: 8 },
  )
})
