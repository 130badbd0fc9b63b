import { Effect } from "effect"
import { ComponentStartError } from "../component/ComponentStartError.ts"
import { InventoryStores, type StoreFactory } from "../processor/inventory/InventoryStore.ts"

/** An exporter of the pipeline, as a store kept by an exporter needs it. */
export interface StoreKeeper {
  readonly id: string
  readonly type: string
  readonly config: unknown
}

/**
 * The stores a processor can name: a store type that stands alone (`memory`), or the id of an exporter
 * of the pipeline whose type keeps a store (`nats`, `nats/archive`), opened with that exporter's config.
 */
export const storeHost = (options: {
  readonly stores: ReadonlyArray<StoreFactory>
  readonly exporters: ReadonlyArray<StoreKeeper>
  readonly clusterName: string
}): InventoryStores["Service"] =>
  InventoryStores.of({
    named: (name) => {
      const alone = options.stores.find((store) => !store.keptByExporter && store.type === name)
      if (alone !== undefined) return alone.create(undefined, { clusterName: options.clusterName, id: name })
      const exporter = options.exporters.find((candidate) => candidate.id === name)
      const kept = options.stores.find((store) => store.keptByExporter && store.type === exporter?.type)
      if (exporter !== undefined && kept !== undefined) {
        return kept.create(exporter.config, { clusterName: options.clusterName, id: name })
      }
      const standalone = options.stores.filter((store) => !store.keptByExporter).map((store) => store.type)
      const keepers = options.stores.filter((store) => store.keptByExporter).map((store) => store.type)
      return Effect.fail(
        new ComponentStartError({
          component: "inventory",
          message: `store ${JSON.stringify(name)} is neither ${standalone.join(", ")} nor an exporter of the pipeline that keeps a store (types: ${keepers.join(", ")})`,
        }),
      )
    },
  })
