import * as Effect from "effect/Effect"
import { ComponentStartError } from "../component/ComponentStartError.ts"
import { InventoryStores, type StoreFactory, type StoreKeeper } from "../pipeline/InventoryStore.ts"

/** The factory and keeper a store name resolves to in the pipeline, or why it resolves to none. */
type Resolved =
  | { readonly _tag: "Found"; readonly factory: StoreFactory; readonly keeper: StoreKeeper | undefined }
  | { readonly _tag: "Problem"; readonly problem: string }

/** The first store that claims the name, in the distribution's order; every way to name one when none does. */
const resolveStore = (
  name: string,
  stores: ReadonlyArray<StoreFactory>,
  exporters: ReadonlyArray<StoreKeeper>,
  receivers: ReadonlyArray<StoreKeeper>,
): Resolved => {
  for (const factory of stores) {
    const claim = factory.claim(name, { receivers, exporters })
    if (claim._tag === "Claimed") return { _tag: "Found", factory, keeper: claim.keeper }
    if (claim._tag === "Refused") return { _tag: "Problem", problem: claim.problem }
  }
  const byType = stores.filter((store) => store.namedBy === "type").map((store) => store.type)
  const byExporter = stores.filter((store) => store.namedBy === "exporter-id").map((store) => store.type)
  return {
    _tag: "Problem",
    problem: `inventory store ${JSON.stringify(name)} is neither ${byType.join(", ")} nor an exporter of the pipeline that keeps a store (types: ${byExporter.join(", ")})`,
  }
}

/**
 * What is wrong with a store name, given the store types and the pipeline's exporters and receivers;
 * nothing when it names a store the pipeline can open.
 */
export const storeProblem = (
  name: string,
  stores: ReadonlyArray<StoreFactory>,
  exporters: ReadonlyArray<StoreKeeper>,
  receivers: ReadonlyArray<StoreKeeper> = [],
): string | undefined => {
  const resolved = resolveStore(name, stores, exporters, receivers)
  return resolved._tag === "Problem" ? resolved.problem : undefined
}

/**
 * The stores a processor can name: each store of the distribution says which names are its own (see
 * `StoreDeclaration`), and opens with the config of the component of the pipeline that keeps it.
 */
export const storeHost = (options: {
  readonly stores: ReadonlyArray<StoreFactory>
  readonly exporters: ReadonlyArray<StoreKeeper>
  readonly receivers?: ReadonlyArray<StoreKeeper>
  readonly clusterName: string
}): InventoryStores["Service"] =>
  InventoryStores.of({
    named: (name) => {
      const resolved = resolveStore(name, options.stores, options.exporters, options.receivers ?? [])
      if (resolved._tag === "Found") {
        return resolved.factory.create(resolved.keeper?.config, { clusterName: options.clusterName, id: name })
      }
      return Effect.fail(new ComponentStartError({ component: "inventory", message: resolved.problem }))
    },
  })
