import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import { FleetView, type HistoryEntry } from "./FleetView.ts"

/** Whether this replica leads (or runs alone), and what its answers come from. */
export interface FleetRole {
  readonly role: "leader" | "follower" | "single"
  /** The holder identity of the Lease, when known. */
  readonly leader?: string
  readonly source: "inventory" | "store" | "none"
}

/** A GPU's history from a durable store, newest first; undefined when the store has none of it. */
export type DurableHistory = (
  uuid: string,
  limit: number,
) => Effect.Effect<ReadonlyArray<HistoryEntry> | undefined, { readonly message: string }>

export interface FleetOptions {
  readonly cluster: string
  /** `FLEET_EVENTS`: size of the ring of recent events. */
  readonly eventCapacity: number
  /** `FLEET_TOKEN`: when set, every `/api` call needs it as a bearer token. */
  readonly token?: string
  /** The folder of the built page (`index.html`, `assets/`); the one under `dist/` unless given. */
  readonly pageDir?: string
  /** A hub's page and API: the GPUs of every cluster, from the hub's records, nodes as `<cluster>/<node>`. */
  readonly acrossClusters?: boolean
}

/**
 * The fleet page and API's state for the service's lifetime: the view the pipeline keeps up to date, the
 * replica's role, and where a GPU's history comes from (the durable store's history when one is set,
 * else the view's own). The health server mounts the routes when the service offers it.
 */
export class Fleet extends Context.Service<
  Fleet,
  {
    readonly options: FleetOptions
    readonly view: FleetView
    readonly role: () => FleetRole
    readonly setRole: (role: FleetRole) => void
    readonly durableHistory: () => DurableHistory | undefined
    readonly setDurableHistory: (history: DurableHistory | undefined) => void
  }
>()("gpu-serials/fleet/Fleet") {
  static readonly make = (options: FleetOptions): Fleet["Service"] => {
    const view = new FleetView({
      eventCapacity: options.eventCapacity,
      cluster: options.cluster,
      ...(options.acrossClusters === true ? { acrossClusters: true } : {}),
    })
    let role: FleetRole = { role: "single", source: "inventory" }
    let history: DurableHistory | undefined
    return Fleet.of({
      options,
      view,
      role: () => role,
      setRole: (next) => {
        role = next
      },
      durableHistory: () => history,
      setDurableHistory: (next) => {
        history = next
      },
    })
  }
}
