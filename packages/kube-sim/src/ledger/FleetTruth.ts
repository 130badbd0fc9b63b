import type { LedgerEntry } from "./LedgerEntry.ts"
import type { TrueHealthState } from "./TrueHealth.ts"

/**
 * A time a GPU spent on one node: from its placement until the next one, or until it left the cluster
 * (with its node, or for another cluster).
 */
export interface GpuStay {
  readonly node: string
  /** The node's `spec.providerID`: the machine the GPU was in. */
  readonly providerId: string
  /** Milliseconds since the epoch. */
  readonly from: number
  /** Absent while the stay lasts. */
  readonly to?: number
}

/** A time a GPU's board spent in one health state, wherever it was. */
export interface HealthStay {
  readonly state: TrueHealthState
  /** Milliseconds since the epoch. */
  readonly from: number
  /** Absent while it lasts (or, for a GPU gone from the cluster, its state when it left). */
  readonly to?: number
}

/** Everything the ledger says about one GPU. */
export interface GpuHistory {
  readonly uuid: string
  readonly serial: string
  /** Oldest first; consecutive stays meet (one's `to` is the next one's `from`). */
  readonly stays: ReadonlyArray<GpuStay>
  /** Its health from its first placement, oldest first; consecutive health stays meet and differ. */
  readonly health: ReadonlyArray<HealthStay>
  /**
   * When the GPU left the cluster (its node was deleted, or it went to another cluster); absent while it
   * is in the cluster (again, for a board that came back).
   */
  readonly goneAt?: number
}

/** Where a GPU of the cluster is now, and whether nvidia-smi on its node reports it. */
export interface GpuWhereabouts {
  readonly uuid: string
  readonly serial: string
  readonly node: string
  readonly providerId: string
  /** Since when it is there, in milliseconds since the epoch. */
  readonly since: number
  /** False while the node's driver fails in a way that hides the GPU. */
  readonly readable: boolean
}

interface MutableHistory {
  readonly uuid: string
  serial: string
  stays: Array<GpuStay>
  health: Array<HealthStay>
  goneAt?: number
}

/**
 * The truth a ledger tells, rebuilt by applying its entries in order: every GPU's stays, where each GPU
 * is now, and which nodes' drivers hide which GPUs. Pure: it reads times from the entries only.
 */
export class FleetTruth {
  private readonly histories = new Map<string, MutableHistory>()
  /** The GPUs a failing driver hides, by node. */
  private readonly hidden = new Map<string, ReadonlySet<string>>()
  private readonly nodes = new Set<string>()
  /** The GPUs on each node now. */
  private readonly onNode = new Map<string, Set<string>>()

  static of(entries: Iterable<LedgerEntry>): FleetTruth {
    const truth = new FleetTruth()
    for (const entry of entries) truth.apply(entry)
    return truth
  }

  apply(entry: LedgerEntry): void {
    const time = Date.parse(entry.time)
    switch (entry.entry) {
      case "node-joined":
        this.nodes.add(entry.node)
        return
      case "node-left":
        this.nodes.delete(entry.node)
        this.hidden.delete(entry.node)
        return
      case "gpu-placed":
        this.place(entry.uuid, entry.serial, entry.node, entry.providerId, time, "ok")
        return
      case "gpu-arrived":
        this.place(entry.uuid, entry.serial, entry.node, entry.providerId, time, entry.health)
        return
      case "gpu-gone":
      case "gpu-departed": {
        const history = this.histories.get(entry.uuid)
        if (history === undefined) return
        this.endStay(history, time)
        history.goneAt = time
        return
      }
      case "driver-failed":
        this.hidden.set(entry.node, new Set(entry.unreadable))
        return
      case "driver-repaired":
        this.hidden.delete(entry.node)
        return
      case "gpu-health": {
        const history = this.histories.get(entry.uuid)
        if (history === undefined) return
        const last = history.health.at(-1)
        if (last !== undefined) history.health[history.health.length - 1] = { ...last, to: time }
        history.health.push({ state: entry.to, from: time })
        return
      }
      default:
        return
    }
  }

  /** Every GPU the cluster ever had, in the order they first appeared. */
  gpus(): ReadonlyArray<GpuHistory> {
    return [...this.histories.values()]
  }

  history(uuid: string): GpuHistory | undefined {
    return this.histories.get(uuid)
  }

  /** Where each GPU of the cluster is now, by UUID. */
  whereNow(): ReadonlyMap<string, GpuWhereabouts> {
    const result = new Map<string, GpuWhereabouts>()
    for (const history of this.histories.values()) {
      const stay = history.stays.at(-1)
      if (history.goneAt !== undefined || stay === undefined) continue
      result.set(history.uuid, {
        uuid: history.uuid,
        serial: history.serial,
        node: stay.node,
        providerId: stay.providerId,
        since: stay.from,
        readable: this.hidden.get(stay.node)?.has(history.uuid) !== true,
      })
    }
    return result
  }

  /** The nodes of the cluster now. */
  nodeNames(): ReadonlyArray<string> {
    return [...this.nodes].sort()
  }

  /** The UUIDs of the GPUs on a node now. */
  gpusOn(node: string): ReadonlyArray<string> {
    return [...(this.onNode.get(node) ?? [])]
  }

  /** The node a GPU of the cluster is on now. */
  nodeOf(uuid: string): string | undefined {
    const history = this.histories.get(uuid)
    return history === undefined || history.goneAt !== undefined ? undefined : history.stays.at(-1)?.node
  }

  /** Starts a GPU's stay on a node; a GPU back in the cluster is in it again, in the health it came back with. */
  private place(
    uuid: string,
    serial: string,
    node: string,
    providerId: string,
    time: number,
    health: TrueHealthState,
  ): void {
    const known = this.histories.get(uuid)
    const history = known ?? { uuid, serial, stays: [], health: [{ state: health, from: time }] }
    this.histories.set(uuid, history)
    history.serial = serial
    this.endStay(history, time)
    if (known !== undefined && history.goneAt !== undefined) {
      delete history.goneAt
      const last = history.health.at(-1)
      if (last !== undefined && last.state !== health) {
        history.health[history.health.length - 1] = { ...last, to: time }
        history.health.push({ state: health, from: time })
      }
    }
    history.stays.push({ node, providerId, from: time })
    this.gpusOnNode(node).add(uuid)
  }

  private gpusOnNode(node: string): Set<string> {
    let set = this.onNode.get(node)
    if (set === undefined) {
      set = new Set()
      this.onNode.set(node, set)
    }
    return set
  }

  private endStay(history: MutableHistory, time: number): void {
    const last = history.stays.at(-1)
    if (last === undefined || last.to !== undefined) return
    history.stays[history.stays.length - 1] = { ...last, to: time }
    const set = this.onNode.get(last.node)
    set?.delete(history.uuid)
    if (set?.size === 0) this.onNode.delete(last.node)
  }
}
