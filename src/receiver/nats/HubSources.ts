import {
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  StorageType,
  type StreamSource,
} from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import { nanos } from "@nats-io/transport-node"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** The hub's stream or bucket could not be set up or read. */
export class HubSourcesError extends Schema.TaggedError<HubSourcesError>()("HubSourcesError", {
  stream: Schema.String,
  operation: Schema.String,
  message: Schema.String,
}) {}

const apiTimeout = Duration.seconds(10)

/** How long the hub stream drops a second message with the same record id (`Nats-Msg-Id`). */
const duplicateWindow = nanos(2 * 60_000)

const call = <A>(stream: string, operation: string, run: () => Promise<A>): Effect.Effect<A, HubSourcesError> =>
  Effect.tryPromise({
    try: run,
    catch: (cause) =>
      new HubSourcesError({ stream, operation, message: cause instanceof Error ? cause.message : String(cause) }),
  }).pipe(
    Effect.timeout(apiTimeout),
    Effect.catchTag("TimeoutError", () =>
      Effect.fail(
        new HubSourcesError({ stream, operation, message: `no answer within ${Duration.format(apiTimeout)}` }),
      ),
    ),
  )

const isNotFound = (cause: unknown): boolean =>
  cause instanceof JetStreamApiError && cause.code === JetStreamApiCodes.StreamNotFound

/** The stream's config, or undefined when it does not exist. */
const existingConfig = (manager: JetStreamManager, stream: string) =>
  Effect.tryPromise({ try: () => manager.streams.info(stream), catch: (cause) => cause }).pipe(
    Effect.timeout(apiTimeout),
    Effect.map((info) => info.config),
    Effect.catch((cause) =>
      isNotFound(cause)
        ? Effect.succeed(undefined)
        : Effect.fail(
            new HubSourcesError({
              stream,
              operation: "lookup",
              message: cause instanceof Error ? cause.message : String(cause),
            }),
          ),
    ),
  )

/** The JetStream domain a source reads from, as the server reports it (`$JS.<domain>.API`). */
export const sourceDomain = (source: unknown): string | undefined => {
  const api = (source as { readonly external?: { readonly api?: unknown } }).external?.api
  if (typeof api !== "string") return undefined
  const match = /^\$JS\.([^.]+)\.API$/.exec(api)
  return match?.[1]
}

/**
 * A cluster's source: `name` in the cluster's domain, only the subjects under `filter(cluster)` when given.
 * Leaf nodes of one account carry each other's subjects, so a cluster's stream also stores the records
 * the other clusters publish; the filter keeps the cluster's own.
 */
const clusterSource = (
  name: string,
  cluster: string,
  filter: ((cluster: string) => string) | undefined,
): StreamSource =>
  filter === undefined ? { name, domain: cluster } : { name, domain: cluster, filter_subject: filter(cluster) }

/** The sources of `clusters` not among `existing`, each `name` in the cluster's domain. */
const missingSources = (
  existing: ReadonlyArray<unknown>,
  clusters: ReadonlyArray<string>,
  name: string,
  filter?: (cluster: string) => string,
): Array<StreamSource> => {
  const sourced = new Set(existing.map(sourceDomain))
  return clusters.filter((cluster) => !sourced.has(cluster)).map((cluster) => clusterSource(name, cluster, filter))
}

/** The subjects of one cluster's records and heartbeats: `<prefix>.<cluster>.>`. */
export const clusterSubjects = (subjectPrefix: string) => (cluster: string) => `${subjectPrefix}.${cluster}.>`

/**
 * Creates the hub stream sourcing `clusterStream` from each cluster's domain, the cluster's own subjects
 * only (`<subjectPrefix>.<cluster>.>`), or adds the clusters it does not source yet; a cluster no longer
 * listed keeps its source, so its history stays readable.
 */
export const ensureHubStream = Effect.fnUntraced(function* (
  manager: JetStreamManager,
  stream: string,
  clusterStream: string,
  subjectPrefix: string,
  clusters: ReadonlyArray<string>,
) {
  const filter = clusterSubjects(subjectPrefix)
  const existing = yield* existingConfig(manager, stream)
  if (existing === undefined) {
    yield* call(stream, "create", () =>
      manager.streams.add({
        name: stream,
        subjects: [],
        sources: clusters.map((cluster) => clusterSource(clusterStream, cluster, filter)),
        storage: StorageType.File,
        duplicate_window: duplicateWindow,
      }),
    )
    yield* Effect.logInfo("created hub stream").pipe(Effect.annotateLogs({ stream, clusters: clusters.join(",") }))
    return
  }
  const missing = missingSources(existing.sources ?? [], clusters, clusterStream, filter)
  if (missing.length === 0) return
  yield* call(stream, "update", () =>
    manager.streams.update(stream, { sources: [...(existing.sources ?? []), ...missing] }),
  )
  yield* Effect.logInfo("hub stream sources more clusters").pipe(
    Effect.annotateLogs({ stream, added: missing.map((source) => source.domain).join(",") }),
  )
})

/**
 * Creates the hub KV bucket sourcing `clusterBucket` from each cluster's domain, or adds the clusters it
 * does not source yet. Keys start with their cluster, so the clusters' keys never meet.
 */
export const ensureHubBucket = Effect.fnUntraced(function* (
  manager: JetStreamManager,
  bucket: string,
  clusterBucket: string,
  clusters: ReadonlyArray<string>,
) {
  const stream = `KV_${bucket}`
  const existing = yield* existingConfig(manager, stream)
  if (existing === undefined) {
    yield* call(stream, "create", () =>
      new Kvm(manager.jetstream()).create(bucket, {
        history: 5,
        sources: clusters.map((cluster) => ({ name: clusterBucket, domain: cluster })),
      }),
    )
    yield* Effect.logInfo("created hub KV bucket").pipe(Effect.annotateLogs({ bucket, clusters: clusters.join(",") }))
    return
  }
  const missing = missingSources(existing.sources ?? [], clusters, `KV_${clusterBucket}`)
  if (missing.length === 0) return
  yield* call(stream, "update", () =>
    manager.streams.update(stream, { sources: [...(existing.sources ?? []), ...missing] }),
  )
  yield* Effect.logInfo("hub KV bucket sources more clusters").pipe(
    Effect.annotateLogs({ bucket, added: missing.map((source) => source.domain).join(",") }),
  )
})

/** One cluster's source of the hub stream as the server reports it. */
export interface SourceState {
  /** Messages of the cluster's stream not copied yet. */
  readonly lag: number
  /** Milliseconds since the source last had contact with the cluster's stream; undefined: never. */
  readonly sinceActiveMs?: number
}

/** The hub stream's sources by cluster (domain). */
export const sourceStates = (
  manager: JetStreamManager,
  stream: string,
): Effect.Effect<ReadonlyMap<string, SourceState>, HubSourcesError> =>
  call(stream, "info", () => manager.streams.info(stream)).pipe(
    Effect.map((info) => {
      const states = new Map<string, SourceState>()
      for (const source of info.sources ?? []) {
        const domain = sourceDomain(source)
        if (domain === undefined) continue
        const active = Number(source.active)
        states.set(domain, {
          lag: Number(source.lag),
          ...(active < 0 || !Number.isFinite(active) ? {} : { sinceActiveMs: active / 1_000_000 }),
        })
      }
      return states
    }),
  )
