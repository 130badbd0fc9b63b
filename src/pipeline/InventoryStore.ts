import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { ComponentStartError } from "../component/ComponentStartError.ts"
import type { InventoryChange } from "../domain/InventoryChange.ts"
import type { KnownGpu } from "../domain/KnownGpu.ts"

/** A durable inventory source could not be read or written. */
export class InventoryStoreError extends Schema.TaggedError<InventoryStoreError>()("InventoryStoreError", {
  /** The kind of store: `memory`, `nats-kv`, `postgres`, `node-labels`. */
  store: Schema.String,
  operation: Schema.Literals(["load", "apply"]),
  /** Short and user-facing; never a raw payload. */
  message: Schema.String,
  /** A compare-and-set write lost against another writer (a KV revision or row version had moved on). */
  conflict: Schema.Boolean,
}) {}

/**
 * Where the inventory processor keeps the current location of every GPU, so that a restart or a
 * leader change rebuilds the inventory instead of reporting the whole fleet as `added`.
 *
 * Implementations: memory (the default, for one process's lifetime), and durable ones (a NATS KV
 * bucket keyed by UUID, the Postgres current-state table, node labels). A store that supports
 * compare-and-set remembers the revision of each key it loaded or wrote and writes with it; when
 * another writer got there first it refreshes that revision and fails the batch with `conflict`, and
 * the processor writes the batch again with what it knows now, so the leader's view wins.
 */
export class InventoryStore extends Context.Service<
  InventoryStore,
  {
    /** The kind of store, as its errors name it: `memory`, `nats-kv`, `postgres`, `node-labels`. */
    readonly kind: string
    /** Every GPU the store knows with its current location (read once, at start). */
    readonly load: Effect.Effect<ReadonlyArray<KnownGpu>, InventoryStoreError>
    /**
     * Writes changes, at most one per UUID, in order: `Upsert` puts the GPU's current location and
     * facts under its UUID, `Remove` deletes the UUID. Either every change is written or the batch
     * fails, and writing the same batch again is harmless.
     */
    readonly apply: (changes: ReadonlyArray<InventoryChange>) => Effect.Effect<void, InventoryStoreError>
  }
>()("gpu-serials/pipeline/InventoryStore") {}

/**
 * A kind of store the inventory's `store` setting can name: one that stands alone (`memory`), one kept by
 * an exporter type (`nats`: the KV bucket of a `nats` exporter), named by that exporter's id in the
 * pipeline, or one kept by the pipeline's receiver (`node-labels`, kept by a `kube_exec` receiver).
 */
export interface StoreFactory {
  /** The store's name (`memory`, `node-labels`), or for a store kept by an exporter, that exporter's type. */
  readonly type: string
  /**
   * Who keeps the store: nobody; an exporter of `type`, whose id names the store and whose config `create`
   * receives; or the pipeline's receiver, of `receiverType`, whose config `create` receives.
   */
  readonly keptBy: "none" | "exporter" | "receiver"
  /** For a store kept by the receiver: the receiver type that can keep it. */
  readonly receiverType?: string
  /** What keeps the keeper's config from keeping the store (a feature it needs turned off); nothing when it can. */
  readonly keeperProblem?: (keeperConfig: unknown) => string | undefined
  create(
    keeperConfig: unknown,
    settings: { readonly clusterName: string; readonly id: string },
  ): Effect.Effect<InventoryStore["Service"], ComponentStartError, Scope.Scope>
}

/** The stores a processor can name, as the service offers them (the Collector's host and its extensions). */
export class InventoryStores extends Context.Service<
  InventoryStores,
  {
    /** Opens the store named `name`; closing the scope closes it. */
    readonly named: (name: string) => Effect.Effect<InventoryStore["Service"], ComponentStartError, Scope.Scope>
  }
>()("gpu-serials/pipeline/InventoryStores") {}
