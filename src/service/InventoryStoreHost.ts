import { Effect } from "effect"
import { ComponentStartError } from "../component/ComponentStartError.ts"
import { InventoryStores, type StoreFactory } from "../processor/inventory/InventoryStore.ts"

/** An exporter of the pipeline, as a store kept by an exporter needs it. */
export interface StoreKeeper {
  readonly id: string
  readonly type: string
  readonly config: unknown
}

/** What is wrong with a store name, given the store types and the pipeline's exporters; nothing when it names one. */
export const storeProblem = (
  name: string,
  stores: ReadonlyArray<StoreFactory>,
  exporters: ReadonlyArray<{ readonly id: string; readonly type: string }>,
): string | undefined => {
  if (stores.some((store) => !store.keptByExporter && store.type === name)) return undefined
  const exporter = exporters.find((candidate) => candidate.id === name)
  if (stores.some((store) => store.keptByExporter && store.type === exporter?.type)) return undefined
  const standalone = stores.filter((store) => !store.keptByExporter).map((store) => store.type)
  const keepers = stores.filter((store) => store.keptByExporter).map((store) => store.type)
  return `inventory store ${JSON.stringify(name)} is neither ${standalone.join(", ")} nor an exporter of the pipeline that keeps a store (types: ${keepers.join(", ")})`
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
      return Effect.fail(
        new ComponentStartError({
          component: "inventory",
          message: storeProblem(name, options.stores, options.exporters) ?? `store ${JSON.stringify(name)} cannot open`,
        }),
      )
    },
  })
