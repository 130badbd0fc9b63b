import * as Effect from "effect/Effect"
import { ComponentStartError } from "../component/ComponentStartError.ts"
import { InventoryStores, type StoreFactory } from "../pipeline/InventoryStore.ts"

/** A component of the pipeline (an exporter or the receiver), as a store it keeps needs it. */
export interface StoreKeeper {
  readonly id: string
  readonly type: string
  readonly config: unknown
}

/** A component as the check of a store name sees it: exporters loaded from a module carry no config here. */
interface NamedComponent {
  readonly id: string
  readonly type: string
  readonly config?: unknown
}

/** The factory and keeper a store name resolves to in the pipeline, or why it resolves to none. */
type Resolved =
  | { readonly _tag: "Found"; readonly factory: StoreFactory; readonly keeper: NamedComponent | undefined }
  | { readonly _tag: "Problem"; readonly problem: string }

const resolveStore = (
  name: string,
  stores: ReadonlyArray<StoreFactory>,
  exporters: ReadonlyArray<NamedComponent>,
  receivers: ReadonlyArray<NamedComponent>,
): Resolved => {
  const named = stores.find((store) => store.keptBy !== "exporter" && store.type === name)
  if (named?.keptBy === "none") return { _tag: "Found", factory: named, keeper: undefined }
  if (named?.keptBy === "receiver") {
    const receiver = receivers.find((candidate) => candidate.type === named.receiverType)
    if (receiver === undefined) {
      return {
        _tag: "Problem",
        problem: `inventory store ${JSON.stringify(name)} is kept by a ${named.receiverType} receiver, and the pipeline has none`,
      }
    }
    const problem = named.keeperProblem?.(receiver.config)
    return problem === undefined ? { _tag: "Found", factory: named, keeper: receiver } : { _tag: "Problem", problem }
  }
  const exporter = exporters.find((candidate) => candidate.id === name)
  const kept = stores.find((store) => store.keptBy === "exporter" && store.type === exporter?.type)
  if (exporter !== undefined && kept !== undefined) {
    const problem = kept.keeperProblem?.(exporter.config)
    return problem === undefined ? { _tag: "Found", factory: kept, keeper: exporter } : { _tag: "Problem", problem }
  }
  const alone = stores.filter((store) => store.keptBy !== "exporter").map((store) => store.type)
  const keepers = stores.filter((store) => store.keptBy === "exporter").map((store) => store.type)
  return {
    _tag: "Problem",
    problem: `inventory store ${JSON.stringify(name)} is neither ${alone.join(", ")} nor an exporter of the pipeline that keeps a store (types: ${keepers.join(", ")})`,
  }
}

/**
 * What is wrong with a store name, given the store types and the pipeline's exporters and receivers;
 * nothing when it names a store the pipeline can open.
 */
export const storeProblem = (
  name: string,
  stores: ReadonlyArray<StoreFactory>,
  exporters: ReadonlyArray<NamedComponent>,
  receivers: ReadonlyArray<NamedComponent> = [],
): string | undefined => {
  const resolved = resolveStore(name, stores, exporters, receivers)
  return resolved._tag === "Problem" ? resolved.problem : undefined
}

/**
 * The stores a processor can name: a store type that stands alone (`memory`), one kept by the pipeline's
 * receiver (`node-labels`, opened with the receiver's config), or the id of an exporter of the pipeline
 * whose type keeps a store (`nats`, `nats/archive`), opened with that exporter's config.
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
