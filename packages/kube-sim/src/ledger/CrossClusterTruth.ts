import type { BoardPlace } from "./BoardPlace.ts"
import { FleetTruth, type GpuStay, type GpuWhereabouts } from "./FleetTruth.ts"
import type { LedgerEntry } from "./LedgerEntry.ts"

/** One cluster's ledger, under the name its board exchange knows it by (its `clusterName`). */
export interface NamedLedger {
  readonly cluster: string
  readonly entries: ReadonlyArray<LedgerEntry>
}

/** A board's move from one cluster to another, as both clusters' ledgers record it. */
export interface CrossClusterMove {
  readonly uuid: string
  readonly serial: string
  /** The exchange's swap number, the same in both ledgers. */
  readonly swap: number
  /** Milliseconds since the epoch: when it left one cluster and reached the other. */
  readonly time: number
  readonly from: BoardPlace
  readonly to: BoardPlace
}

/** One end of a move that the other ledger does not have (a ledger left out, or cut short). */
export interface UnmatchedCrossing {
  /** The cluster whose ledger has this end. */
  readonly cluster: string
  readonly entry: Extract<LedgerEntry, { entry: "gpu-departed" | "gpu-arrived" }>
}

/** A time a GPU spent on one node of one cluster. */
export interface ClusterStay extends GpuStay {
  readonly cluster: string
}

/** Everything the ledgers say about one GPU across clusters: its stays in every cluster, oldest first. */
export interface FleetGpuHistory {
  readonly uuid: string
  readonly serial: string
  readonly stays: ReadonlyArray<ClusterStay>
}

/** Where a GPU is now, and in which cluster. */
export interface FleetWhereabouts extends GpuWhereabouts {
  readonly cluster: string
}

const crossingKey = (swap: number, uuid: string): string => `${swap}/${uuid}`

/**
 * The truth of several clusters that swap boards through one exchange, from their ledgers: each
 * cluster's `FleetTruth`, the moves between clusters (a `gpu-departed` in one ledger paired with the
 * `gpu-arrived` of the same swap and UUID in the other), every GPU's stays across clusters and where
 * each GPU is now. Pure: it reads times from the entries only.
 */
export class CrossClusterTruth {
  private readonly truths: ReadonlyMap<string, FleetTruth>
  private readonly paired: ReadonlyArray<CrossClusterMove>
  private readonly unpaired: ReadonlyArray<UnmatchedCrossing>

  private constructor(
    truths: ReadonlyMap<string, FleetTruth>,
    paired: ReadonlyArray<CrossClusterMove>,
    unpaired: ReadonlyArray<UnmatchedCrossing>,
  ) {
    this.truths = truths
    this.paired = paired
    this.unpaired = unpaired
  }

  static of(ledgers: ReadonlyArray<NamedLedger>): CrossClusterTruth {
    const truths = new Map<string, FleetTruth>()
    const departures = new Map<string, UnmatchedCrossing>()
    const arrivals = new Map<string, UnmatchedCrossing>()
    for (const { cluster, entries } of ledgers) {
      if (truths.has(cluster)) throw new RangeError(`two ledgers of cluster "${cluster}"`)
      truths.set(cluster, FleetTruth.of(entries))
      for (const entry of entries) {
        if (entry.entry === "gpu-departed") departures.set(crossingKey(entry.swap, entry.uuid), { cluster, entry })
        if (entry.entry === "gpu-arrived") arrivals.set(crossingKey(entry.swap, entry.uuid), { cluster, entry })
      }
    }
    const moves: Array<CrossClusterMove> = []
    const unmatched: Array<UnmatchedCrossing> = []
    for (const [key, departure] of departures) {
      const arrival = arrivals.get(key)
      const left = departure.entry
      if (
        arrival === undefined ||
        arrival.entry.entry !== "gpu-arrived" ||
        left.entry !== "gpu-departed" ||
        arrival.cluster !== left.toCluster ||
        arrival.entry.fromCluster !== departure.cluster
      ) {
        unmatched.push(departure)
        continue
      }
      arrivals.delete(key)
      moves.push({
        uuid: left.uuid,
        serial: left.serial,
        swap: left.swap,
        time: Date.parse(left.time),
        from: { cluster: departure.cluster, node: left.node, providerId: left.providerId },
        to: { cluster: arrival.cluster, node: arrival.entry.node, providerId: arrival.entry.providerId },
      })
    }
    unmatched.push(...arrivals.values())
    moves.sort((a, b) => a.time - b.time || a.swap - b.swap || a.uuid.localeCompare(b.uuid))
    return new CrossClusterTruth(truths, moves, unmatched)
  }

  /** The clusters whose ledgers were given, by name. */
  clusters(): ReadonlyArray<string> {
    return [...this.truths.keys()].sort()
  }

  /** One cluster's own truth, as `FleetTruth.of` its ledger gives it. */
  cluster(name: string): FleetTruth | undefined {
    return this.truths.get(name)
  }

  /** Every move between clusters both ledgers record, oldest first. */
  moves(): ReadonlyArray<CrossClusterMove> {
    return this.paired
  }

  /** The ends of moves whose other end no given ledger records; empty when every ledger is complete. */
  unmatched(): ReadonlyArray<UnmatchedCrossing> {
    return this.unpaired
  }

  /** A GPU's stays in every cluster, oldest first; undefined for a GPU no cluster ever had. */
  history(uuid: string): FleetGpuHistory | undefined {
    const stays: Array<ClusterStay> = []
    let serial: string | undefined
    for (const [cluster, truth] of this.truths) {
      const history = truth.history(uuid)
      if (history === undefined) continue
      serial = history.serial
      for (const stay of history.stays) stays.push({ ...stay, cluster })
    }
    if (serial === undefined) return undefined
    // A board may leave and come back within one millisecond: of stays starting together, the one that ended comes first.
    stays.sort((a, b) => a.from - b.from || (a.to ?? Number.POSITIVE_INFINITY) - (b.to ?? Number.POSITIVE_INFINITY))
    return { uuid, serial, stays }
  }

  /** Where each GPU of every cluster is now, by UUID. */
  whereNow(): ReadonlyMap<string, FleetWhereabouts> {
    const result = new Map<string, FleetWhereabouts>()
    for (const [cluster, truth] of this.truths)
      for (const [uuid, whereabouts] of truth.whereNow()) result.set(uuid, { ...whereabouts, cluster })
    return result
  }
}
