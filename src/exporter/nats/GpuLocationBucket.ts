import { type KV, Kvm } from "@nats-io/kv"
import type { NatsConnection } from "@nats-io/transport-node"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { defectMessage } from "../../log/ShortMessage.ts"
/** How long one KV call may take. */
export const kvTimeout = Duration.seconds(10)

/** A call to the KV bucket failed, timed out, or lost a compare-and-set against another writer. */
export class GpuLocationBucketError extends Schema.TaggedError<GpuLocationBucketError>()("GpuLocationBucketError", {
  bucket: Schema.String,
  message: Schema.String,
  /** The key had another revision than the one written against. */
  conflict: Schema.Boolean,
}) {}

/** What the server answers when a compare-and-set finds another revision. */
const isWrongRevision = (cause: unknown): boolean => /wrong last sequence/i.test(defectMessage(cause))

/** One KV call under `kvTimeout`, its failure as a `GpuLocationBucketError`. */
export const kvCall = <A>(bucket: string, operation: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (cause) =>
      new GpuLocationBucketError({
        bucket,
        message: `${operation}: ${defectMessage(cause)}`,
        conflict: isWrongRevision(cause),
      }),
  }).pipe(
    Effect.timeout(kvTimeout),
    Effect.catchTag("TimeoutError", () =>
      Effect.fail(
        new GpuLocationBucketError({
          bucket,
          message: `${operation}: no answer within ${Duration.format(kvTimeout)}`,
          conflict: false,
        }),
      ),
    ),
  )

/** Revisions a bucket keeps per key: the current one and a few before, for `nats kv history`. */
const history = 5

/** Opens the bucket of current locations, creating it (file storage, 5 revisions per key) when missing. */
export const openBucket = (connection: NatsConnection, bucket: string): Effect.Effect<KV, GpuLocationBucketError> =>
  kvCall(bucket, "open bucket", () => new Kvm(connection).create(bucket, { history }))

/** Opens an existing bucket for reading; fails when it does not exist. */
export const openExistingBucket = (
  connection: NatsConnection,
  bucket: string,
): Effect.Effect<KV, GpuLocationBucketError> => kvCall(bucket, "open bucket", () => new Kvm(connection).open(bucket))

/** The values of the current entries whose keys match `filter`, deleted keys left out. */
export const currentValues = (kv: KV, bucket: string, filter: string) =>
  Effect.gen(function* () {
    const keys = yield* kvCall(bucket, "list keys", async () => {
      const listed: Array<string> = []
      for await (const key of await kv.keys(filter)) listed.push(key)
      return listed
    })
    const entries = yield* Effect.forEach(keys, (key) => kvCall(bucket, `get ${key}`, () => kv.get(key)), {
      concurrency: 16,
    })
    return entries.flatMap((entry) =>
      entry === null || entry.operation !== "PUT"
        ? []
        : [{ key: entry.key, revision: entry.revision, value: entry.string() }],
    )
  })
