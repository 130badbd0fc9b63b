import type { KV } from "@nats-io/kv"
import type { NatsConnection } from "@nats-io/transport-node"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { ComponentStartError } from "../../component/ComponentStartError.ts"
import { knownGpuOf, type LocatedGpu, locatedGpu, locationOf, parseLocatedGpu } from "../../domain/GpuLocation.ts"
import type { InventoryChange } from "../../domain/InventoryChange.ts"
import type { KnownGpu } from "../../domain/KnownGpu.ts"
import { scoped as scopedConnection } from "../../natsclient/NatsConnection.ts"
import {
  exporterKeptStore,
  InventoryStore,
  InventoryStoreError,
  type StoreFactory,
} from "../../pipeline/InventoryStore.ts"
import { currentValues, type GpuLocationBucketError, kvCall, openBucket } from "./GpuLocationBucket.ts"
import { clusterSerialKeys, clusterUuidKeys, serialKey, uuidKey } from "./GpuLocationKey.ts"
import type { NatsExporterConfig } from "./NatsConfig.ts"

const kind = "nats-kv"

const storeError = (operation: "load" | "apply") => (error: GpuLocationBucketError) =>
  new InventoryStoreError({ store: kind, operation, message: error.message, conflict: error.conflict })

/**
 * The inventory's durable store in a NATS KV bucket of current locations: `<cluster>.uuid.<uuid>`
 * holds where a GPU of `cluster` is and what the inventory knows of it, `<cluster>.serial.<serial>.<uuid>`
 * its location by serial. The store reads and writes only its own cluster's keys, so clusters can share
 * a bucket. Every write is a compare-and-set against the revision this store last loaded or wrote;
 * when another writer (a replica, a restarted process) moved a key on, the store reads the key's
 * revision again and fails the batch with `conflict`, and the processor writes the batch again.
 */
export const make = Effect.fnUntraced(function* (options: {
  readonly connection: NatsConnection
  readonly bucket: string
  readonly cluster: string
}): Effect.fn.Return<InventoryStore["Service"], InventoryStoreError> {
  const { bucket, cluster } = options
  const kv: KV = yield* openBucket(options.connection, bucket).pipe(Effect.mapError(storeError("load")))
  /** Revision of each key as this store last read or wrote it; absent: the key was never seen. */
  const revisions = new Map<string, number>()
  /** The entries of this cluster's GPUs as last loaded or written. */
  const entries = new Map<string, LocatedGpu>()

  /** After a lost compare-and-set: the key's current revision, to write against next time. */
  const refresh = (key: string) =>
    kvCall(bucket, `get ${key}`, () => kv.get(key)).pipe(
      Effect.map((entry) => (entry === null ? void revisions.delete(key) : void revisions.set(key, entry.revision))),
    )

  const compareAndSet = (key: string, value: string) =>
    Effect.suspend(() => {
      const revision = revisions.get(key)
      return kvCall(bucket, `write ${key}`, () =>
        revision === undefined ? kv.create(key, value) : kv.update(key, value, revision),
      )
    }).pipe(
      Effect.tap((revision) => Effect.sync(() => revisions.set(key, revision))),
      Effect.tapError((error) => (error.conflict ? refresh(key).pipe(Effect.ignore) : Effect.void)),
    )

  const compareAndDelete = (key: string) =>
    Effect.suspend(() => {
      const revision = revisions.get(key)
      if (revision === undefined) return Effect.void
      return kvCall(bucket, `delete ${key}`, () => kv.delete(key, { previousSeq: revision })).pipe(
        Effect.tap(() => Effect.sync(() => revisions.delete(key))),
        Effect.tapError((error) => (error.conflict ? refresh(key).pipe(Effect.ignore) : Effect.void)),
      )
    })

  const upsert = Effect.fnUntraced(function* (known: KnownGpu) {
    const previous = entries.get(known.uuid)
    const located = locatedGpu(known, cluster, previous)
    yield* compareAndSet(uuidKey(cluster, known.uuid), JSON.stringify(located)).pipe(
      // The writer that got there first moved the serial key on as well.
      Effect.tapError((error) =>
        error.conflict && located.serial !== ""
          ? refresh(serialKey(cluster, located.serial, known.uuid)).pipe(Effect.ignore)
          : Effect.void,
      ),
    )
    entries.set(known.uuid, located)
    if (previous !== undefined && previous.serial !== "" && previous.serial !== located.serial) {
      yield* compareAndDelete(serialKey(cluster, previous.serial, known.uuid))
    }
    if (located.serial !== "") {
      yield* compareAndSet(serialKey(cluster, located.serial, known.uuid), JSON.stringify(locationOf(located)))
    }
  })

  const remove = Effect.fnUntraced(function* (uuid: string) {
    const previous = entries.get(uuid)
    yield* compareAndDelete(uuidKey(cluster, uuid))
    entries.delete(uuid)
    if (previous !== undefined && previous.serial !== "")
      yield* compareAndDelete(serialKey(cluster, previous.serial, uuid))
  })

  const applyChange = (change: InventoryChange) => (change._tag === "Upsert" ? upsert(change.gpu) : remove(change.uuid))

  const load = Effect.gen(function* () {
    const found = yield* currentValues(kv, bucket, clusterUuidKeys(cluster))
    const serials = yield* currentValues(kv, bucket, clusterSerialKeys(cluster))
    for (const entry of [...found, ...serials]) revisions.set(entry.key, entry.revision)
    const known: Array<KnownGpu> = []
    for (const entry of found) {
      const located = parseLocatedGpu(entry.value)
      // An entry that does not parse or names another GPU than its key is not this store's: left as it is.
      if (located === undefined || located.cluster !== cluster || entry.key !== uuidKey(cluster, located.uuid)) continue
      entries.set(located.uuid, located)
      known.push(knownGpuOf(located))
    }
    return known
  }).pipe(Effect.mapError(storeError("load")))

  return InventoryStore.of({
    kind,
    load,
    apply: (changes) =>
      Effect.forEach(changes, applyChange, { discard: true }).pipe(Effect.mapError(storeError("apply"))),
  })
})

/** Connection attempts at start: 5, exponential from 1 s with jitter, at most 10 s apart. */
const startSchedule = Schedule.exponential(Duration.seconds(1)).pipe(
  Schedule.jittered,
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(10)))),
  Schedule.upTo({ times: 4 }),
)

/**
 * The store over a connection of its own, drained when the scope closes. Without its durable
 * source the inventory would announce the whole fleet as `added`, so failing to reach NATS at start
 * (after a few attempts) fails the start.
 */
export const scoped = Effect.fnUntraced(function* (options: {
  readonly config: Pick<NatsExporterConfig, "servers" | "auth" | "tls" | "kvBucket">
  readonly cluster: string
  readonly name: string
}): Effect.fn.Return<InventoryStore["Service"], ComponentStartError, Scope.Scope> {
  const bucket = options.config.kvBucket
  const startFailure = (error: { readonly message: string }) =>
    new ComponentStartError({
      component: "inventory",
      message: `cannot open the NATS KV bucket ${bucket}: ${error.message}`,
    })
  const connection = yield* scopedConnection(options.config, options.name).pipe(
    Effect.retry(startSchedule),
    Effect.mapError(startFailure),
  )
  return yield* make({ connection, bucket, cluster: options.cluster }).pipe(
    Effect.retry(startSchedule),
    Effect.mapError(startFailure),
  )
})

/**
 * The store kept by a `nats` exporter, named by that exporter's id (`store: nats`): its servers,
 * credentials, TLS and KV bucket, over a connection of the store's own.
 */
export const storeFactory: StoreFactory = {
  ...exporterKeptStore("nats"),
  create: (exporterConfig, settings) =>
    scoped({
      // The service passes the config the `nats` exporter's own settings built.
      config: exporterConfig as NatsExporterConfig,
      cluster: settings.clusterName,
      name: `gpu-serials inventory (${settings.clusterName})`,
    }),
}
