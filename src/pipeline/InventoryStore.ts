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

/** A component of the pipeline as a store it keeps sees it: the one whose config says where the store is. */
export interface StoreKeeper {
  readonly id: string
  readonly type: string
  /** Its validated config; absent for an exporter loaded from a module, whose config is its own. */
  readonly config?: unknown
}

/** The components of the pipeline a store name may refer to. */
export interface PipelineKeepers {
  readonly receivers: ReadonlyArray<StoreKeeper>
  readonly exporters: ReadonlyArray<StoreKeeper>
}

/** What a store makes of a name the inventory's `store` setting gives: its own, its own but unusable here, or not its. */
export type StoreClaim =
  | { readonly _tag: "Claimed"; readonly keeper?: StoreKeeper }
  | { readonly _tag: "Refused"; readonly problem: string }
  | { readonly _tag: "NotMine" }

const notMine: StoreClaim = { _tag: "NotMine" }

/** How the config names a kind of store, and which component of the pipeline keeps it. */
export interface StoreDeclaration {
  /** The store's name (`memory`, `node-labels`), or for a store kept by an exporter, that exporter's type. */
  readonly type: string
  /** Whether the config names the store by its type (`memory`) or by the id of the exporter keeping it (`nats/archive`). */
  readonly namedBy: "type" | "exporter-id"
  readonly claim: (name: string, pipeline: PipelineKeepers) => StoreClaim
}

/** A kind of store the inventory's `store` setting can name, and how it is opened. */
export interface StoreFactory extends StoreDeclaration {
  /** Opens the store with the config of the component that keeps it (nothing for a store that stands alone). */
  create(
    keeperConfig: unknown,
    settings: { readonly clusterName: string; readonly id: string },
  ): Effect.Effect<InventoryStore["Service"], ComponentStartError, Scope.Scope>
}

/** A store named by its type that no component of the pipeline keeps (`memory`). */
export const standaloneStore = (type: string): StoreDeclaration => ({
  type,
  namedBy: "type",
  claim: (name) => (name === type ? { _tag: "Claimed" } : notMine),
})

/**
 * A store named by its type and kept by the pipeline's receiver of `receiverType` (`node-labels`, written by
 * a `kube_exec` receiver), whose config must allow it: `keeperProblem` says what keeps it from keeping the store.
 */
export const receiverKeptStore = (
  type: string,
  receiverType: string,
  keeperProblem: (receiverConfig: unknown) => string | undefined,
): StoreDeclaration => ({
  type,
  namedBy: "type",
  claim: (name, pipeline) => {
    if (name !== type) return notMine
    const receiver = pipeline.receivers.find((candidate) => candidate.type === receiverType)
    if (receiver === undefined) {
      return {
        _tag: "Refused",
        problem: `inventory store ${JSON.stringify(name)} is kept by a ${receiverType} receiver, and the pipeline has none`,
      }
    }
    const problem = keeperProblem(receiver.config)
    return problem === undefined ? { _tag: "Claimed", keeper: receiver } : { _tag: "Refused", problem }
  },
})

/** A store named by the id of an exporter of `exporterType` in the pipeline, which keeps it (`nats`, `nats/archive`). */
export const exporterKeptStore = (exporterType: string): StoreDeclaration => ({
  type: exporterType,
  namedBy: "exporter-id",
  claim: (name, pipeline) => {
    const exporter = pipeline.exporters.find((candidate) => candidate.id === name && candidate.type === exporterType)
    return exporter === undefined ? notMine : { _tag: "Claimed", keeper: exporter }
  },
})

/** The stores a processor can name, as the service offers them (the Collector's host and its extensions). */
export class InventoryStores extends Context.Service<
  InventoryStores,
  {
    /** Opens the store named `name`; closing the scope closes it. */
    readonly named: (name: string) => Effect.Effect<InventoryStore["Service"], ComponentStartError, Scope.Scope>
  }
>()("gpu-serials/pipeline/InventoryStores") {}
