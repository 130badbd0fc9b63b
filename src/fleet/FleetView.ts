import type { StoredClusterGpu } from "../domain/ClusterObservation.ts"
import type { GpuRecord } from "../domain/GpuRecord.ts"
import type { InventoryChange } from "../domain/InventoryChange.ts"
import type { InventoryEvent } from "../domain/InventoryEvent.ts"
import { chassisOf, type KnownGpu } from "../domain/KnownGpu.ts"
import { knownGpuOfRecord } from "../domain/KnownGpuOfRecord.ts"
import type { NodeObservation } from "../domain/NodeObservation.ts"
import { SharedValues } from "./SharedValues.ts"
import { SortedKeys } from "./SortedKeys.ts"

/**
 * One GPU as the fleet API knows it: the inventory's entry and when it arrived on its current node. Its
 * place in list answers (`FleetView.orderKeyOf`) and its UUID as the index keeps it (`uuidKey`) come from
 * the entry when asked for, not kept: at 46,000 GPUs they were 6 MB of strings.
 */
export interface FleetGpu {
  readonly known: KnownGpu
  /**
   * On a hub only: the cluster of the GPU's last record, and the node the view files it under,
   * `<cluster>/<node>`. A cluster's view keeps neither (its GPUs are in its own cluster, filed under their
   * node's name), 16 bytes a GPU less: ask the view (`clusterOf`, `placeOf`).
   */
  readonly cluster?: string
  readonly place?: string
  /** When it arrived on its current node, or was first seen. */
  readonly since: Date
  /** Lower-cased, for searches: serial ("" when none), node, chassis ("" when none), product. */
  readonly serialKey: string
  readonly nodeKey: string
  readonly chassisKey: string
  readonly productKey: string
}

/** The last reading of a node, good or failed. */
export interface LastReading {
  readonly time: Date
  readonly result: "ok" | "failed"
  readonly failure?: { readonly kind: string; readonly reason: string }
  readonly providerId?: string
}

/** One entry of a GPU's history as this process saw it. */
export interface HistoryEntry {
  readonly time: string
  readonly event: string
  readonly node: string
  readonly machine: string
  readonly chassis: string
  readonly healthState?: string
  readonly previousHealthState?: string
  readonly previousNode?: string
  readonly previousMachine?: string
  /** On a hub: the cluster the GPU was in at this entry. */
  readonly cluster?: string
  /** For `moved` across clusters, on a hub: the cluster the GPU was in before. */
  readonly previousCluster?: string
}

export interface FleetViewOptions {
  /** Size of the ring of recent events (`FLEET_EVENTS`); 0 keeps none. */
  readonly eventCapacity: number
  /** Entries kept per GPU in the process's own history. */
  readonly historyPerGpu?: number
  /** GPUs whose history is kept; beyond it the GPU heard of longest ago is forgotten. */
  readonly historyGpus?: number
  /** Entries kept in all; beyond it the histories of the GPUs heard of longest ago are forgotten. */
  readonly historyEntries?: number
  /** Nodes whose last reading is kept without GPUs; beyond it the oldest is forgotten. */
  readonly readingNodes?: number
  /** The cluster whose GPUs the view holds; every GPU's `cluster` unless the view spans clusters. */
  readonly cluster?: string
  /**
   * A hub's view: the GPUs of every cluster, fed from the hub's records (`follow`). Nodes are filed as
   * `<cluster>/<node>`, since node names repeat across clusters; list order is cluster, node, index, UUID.
   */
  readonly acrossClusters?: boolean
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** Entries the process's own history keeps in all by default: about 35 MB at a churn's mix, whatever its rate; postgres keeps the rest. */
export const defaultHistoryEntries = 100_000

/** The events a GPU's history holds: where it went and how its condition changed, not the periodic reports. */
const historyKinds: ReadonlySet<string> = new Set(["added", "moved", "removed", "health"])

const lower = (text: string): string => text.toLowerCase()

/** An empty key is no key: a GPU without a serial or chassis is not in that index. */
const orUndefined = (key: string | undefined): string | undefined => (key === "" ? undefined : key)

/** Names kept lower-cased at most: beyond it a name is lower-cased on its own, unshared. */
const sharedNamesBound = 200_000

/** Names and pods of records kept once, of each kind, before that kind starts anew; and recent times kept once. */
const sharedValuesBounds = { names: 100_000, times: 4096 }

/**
 * Lower-cased names shared by many GPUs (a node's, a chassis', a product's), kept once while a GPU of the
 * view uses them (a name in lower case already is its own): a fleet has far fewer of them than GPUs, and
 * a churning one names new nodes all along, so a name goes with its last GPU. Bounded; past the bound a
 * name is lower-cased on its own.
 */
class SharedLower {
  private readonly names = new Map<string, { readonly lowered: string; users: number }>()

  /** The name lower-cased, for one more GPU. */
  hold(text: string): string {
    const known = this.names.get(text)
    if (known !== undefined) {
      known.users++
      return known.lowered
    }
    const lowered = lower(text)
    // A name in lower case already (a Kubernetes node's always is) is its own key: nothing to share.
    if (lowered === text) return text
    if (this.names.size < sharedNamesBound) this.names.set(text, { lowered, users: 1 })
    return lowered
  }

  /** One GPU fewer uses the name: forgotten with its last. */
  release(text: string): void {
    const known = this.names.get(text)
    if (known === undefined) return
    known.users--
    if (known.users <= 0) this.names.delete(text)
  }

  clear(): void {
    this.names.clear()
  }

  get size(): number {
    return this.names.size
  }
}

/** The names of a GPU that the view keeps lower-cased: its node's, its chassis', its product's. */
const sharedNamesOf = (known: KnownGpu): readonly [string, string, string] => [
  known.node,
  chassisOf(known),
  known.gpu.product ?? "",
]

/** Whether a UUID starts with `GPU-`, in any case: the prefix its key goes without. */
const gpuPrefixed = (uuid: string): boolean => /^gpu-/i.test(uuid)

/** The UUID as the prefix index keeps it: lower case, without `GPU-`. */
export const uuidKey = (uuid: string): string => lower(gpuPrefixed(uuid) ? uuid.slice(4) : uuid)

/** Whether the UUID's key (`uuidKey`) starts with `prefix`, a lower-cased text, without making the key. */
export const uuidKeyStartsWith = (uuid: string, prefix: string): boolean => {
  const from = gpuPrefixed(uuid) ? 4 : 0
  if (uuid.length - from < prefix.length) return false
  for (let at = 0; at < prefix.length; at++) {
    let code = uuid.charCodeAt(from + at)
    // Beyond ASCII, lower-casing is Unicode's: the key itself decides.
    if (code > 0x7f) return uuidKey(uuid).startsWith(prefix)
    if (code >= 0x41 && code <= 0x5a) code += 0x20
    if (code !== prefix.charCodeAt(at)) return false
  }
  return true
}

/** The order of list answers: node name, then index, then UUID. */
export const orderKey = (known: KnownGpu): string =>
  `${known.node}\u0000${paddedIndex(known.gpu.index)}\u0000${known.uuid}`

const paddedIndex = (index: number): string => String(index).padStart(6, "0")

const compareTexts = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Two indexes as their padded texts compare in `orderKey`: as numbers below a million, the most a key pads to. */
const compareIndexes = (a: number, b: number): number =>
  a >= 0 && b >= 0 && a < 1_000_000 && b < 1_000_000 && Number.isInteger(a) && Number.isInteger(b)
    ? a - b
    : compareTexts(paddedIndex(a), paddedIndex(b))

/**
 * Two GPUs in the order of their `orderKey`s, without making them: the keys' parts are joined by U+0000,
 * which sorts before any character of a name, so comparing part by part is comparing the keys.
 */
export const compareOrder = (a: KnownGpu, b: KnownGpu): number =>
  compareTexts(a.node, b.node) || compareIndexes(a.gpu.index, b.gpu.index) || compareTexts(a.uuid, b.uuid)

/** A hub's node: `<cluster>/<node>`; a node name has no `/`, so the two parts are always told apart. */
export const clusterNode = (cluster: string, node: string): string => `${cluster}/${node}`

/**
 * What the fleet API answers from, kept by the service as the inventory changes: the known GPUs with
 * indexes by serial, UUID, node and chassis (lower-cased, prefix-searchable), the order of list answers,
 * each node's last reading, a ring of the last events and each GPU's recent history. Plain mutable data,
 * changed by one writer (the pipeline) and read between its changes.
 */
export class FleetView {
  readonly gpus = new Map<string, FleetGpu>()
  readonly bySerial = new SortedKeys((uuid) => orUndefined(this.gpus.get(uuid)?.serialKey))
  readonly byUuid = new SortedKeys((uuid) => (this.gpus.has(uuid) ? uuidKey(uuid) : undefined))
  readonly byNode = new SortedKeys((uuid) => this.gpus.get(uuid)?.nodeKey)
  readonly byChassis = new SortedKeys((uuid) => orUndefined(this.gpus.get(uuid)?.chassisKey))
  readonly order = new SortedKeys((uuid) => {
    const entry = this.gpus.get(uuid)
    return entry === undefined ? undefined : this.orderKeyOf(entry)
  })
  /** Each index kept by a field of an entry, with that field. */
  private readonly indexes = [
    [this.bySerial, "serialKey"],
    [this.byNode, "nodeKey"],
    [this.byChassis, "chassisKey"],
  ] as const
  /** GPUs by node name, in the order they came: a node holds a handful, so a list is smaller than a set. */
  readonly nodeGpus = new Map<string, Array<string>>()
  readonly readings = new Map<string, LastReading>()
  private nodeNames: Array<string> | undefined
  private ordered: Array<FleetGpu> | undefined
  private readonly ring: Array<GpuRecord | undefined>
  private ringNext = 0
  private ringSize = 0
  /** Each GPU's entries, oldest first: a GPU of one entry (most of them) holds it bare, without an array. */
  private readonly histories = new Map<string, HistoryEntry | ReadonlyArray<HistoryEntry>>()
  /** The GPUs of `histories` whose oldest entries were dropped (`historyPerGpu`). */
  private readonly droppedHistories = new Set<string>()
  readonly historyPerGpu: number
  private readonly historyGpus: number
  private readonly historyEntries: number
  private historyEntryCount = 0
  /** The last entry made: the next one, when equal (the other GPUs of a node read at once), is the same object. */
  private lastEntry: HistoryEntry | undefined
  private readonly readingNodes: number
  private readonly shared = new SharedLower()
  /** The texts, times and pods of the records a hub's view follows and of history entries, kept once. */
  private readonly values = new SharedValues(sharedValuesBounds)
  /** When this view started hearing events: the start of the process's own history. */
  readonly since: Date

  readonly options: FleetViewOptions

  constructor(options: FleetViewOptions, now: Date = new Date()) {
    this.options = options
    this.ring = new Array(options.eventCapacity)
    this.historyPerGpu = options.historyPerGpu ?? 50
    this.historyGpus = options.historyGpus ?? 200_000
    this.historyEntries = options.historyEntries ?? defaultHistoryEntries
    this.readingNodes = options.readingNodes ?? 50_000
    this.since = now
  }

  /** How many names (of nodes, chassis, products) the view keeps lower-cased for its GPUs. */
  get sharedNames(): number {
    return this.shared.size
  }

  get eventCapacity(): number {
    return this.options.eventCapacity
  }

  /** Applies the inventory's changes: a GPU is now where its entry says, or gone. */
  apply(changes: ReadonlyArray<InventoryChange>): void {
    for (const change of changes) {
      if (change._tag === "Upsert") this.put(change.gpu, this.options.cluster ?? "")
      else this.drop(change.uuid)
    }
  }

  /**
   * A hub's view takes the records its fleet processor hands over: a GPU is where its last record puts
   * it, in that record's cluster; a `removed` (forwarded once no other cluster claimed the GPU) forgets it.
   */
  follow(records: ReadonlyArray<GpuRecord>): void {
    for (const record of records) {
      if (record.event === "removed") this.drop(record.uuid)
      else {
        const known = knownGpuOfRecord(record, this.gpus.get(record.uuid)?.known, this.values)
        this.put(known, this.values.text(record.cluster))
      }
    }
  }

  /**
   * A hub's view at start takes every cluster's GPUs as their inventory stores last wrote them, as
   * `follow` places a record's, without history entries or events. A GPU a record placed already keeps
   * that place: the record is newer than what the store held when it was read.
   */
  seed(stored: ReadonlyArray<StoredClusterGpu>): void {
    for (const { cluster, known, since } of stored) {
      if (!this.gpus.has(known.uuid)) this.put(known, this.values.text(cluster), since)
    }
  }

  /** Forgets every GPU and reading (a term ended; the next one loads its own). Events and histories stay. */
  clearInventory(): void {
    this.gpus.clear()
    this.shared.clear()
    this.values.clear()
    for (const index of [this.bySerial, this.byUuid, this.byNode, this.byChassis, this.order]) index.clear()
    this.nodeGpus.clear()
    this.readings.clear()
    this.nodeNames = undefined
    this.ordered = undefined
  }

  /** The cluster a GPU is in: the view's own, or on a hub the cluster of its last record. */
  clusterOf(entry: FleetGpu): string {
    return entry.cluster ?? this.options.cluster ?? ""
  }

  /** The node the view files a GPU under (`nodeGpus`): its name, or on a hub `<cluster>/<node>`. */
  placeOf(entry: FleetGpu): string {
    return entry.place ?? entry.known.node
  }

  /** The GPU's place in list answers: node name, index and UUID, after its cluster on a hub. */
  orderKeyOf(entry: FleetGpu): string {
    return this.options.acrossClusters === true
      ? `${this.clusterOf(entry)}\u0000${orderKey(entry.known)}`
      : orderKey(entry.known)
  }

  /** Two GPUs in list order, as their `orderKeyOf` compare, without making the keys. */
  compareOrder(a: FleetGpu, b: FleetGpu): number {
    return (
      (this.options.acrossClusters === true ? compareTexts(this.clusterOf(a), this.clusterOf(b)) : 0) ||
      compareOrder(a.known, b.known)
    )
  }

  /** Every GPU in list order (node, index, UUID); kept until a GPU arrives, leaves or changes place. */
  orderedGpus(): ReadonlyArray<FleetGpu> {
    if (this.ordered === undefined) {
      this.ordered = this.order.all().flatMap((uuid) => {
        const entry = this.gpus.get(uuid)
        return entry === undefined ? [] : [entry]
      })
    }
    return this.ordered
  }

  /** Notes a node's reading, good or failed; a node gone is forgotten once it has no GPUs. */
  observe(observation: NodeObservation): void {
    if (observation._tag === "NodeRead" || observation._tag === "NodeReadFailed") {
      const { node } = observation
      const isNew = !this.readings.has(node.name)
      this.readings.delete(node.name)
      this.readings.set(node.name, {
        time: observation.time,
        result: observation._tag === "NodeRead" ? "ok" : "failed",
        ...(observation._tag === "NodeReadFailed"
          ? { failure: { kind: observation.failure.kind, reason: observation.failure.message } }
          : {}),
        ...(node.providerId === undefined ? {} : { providerId: node.providerId }),
      })
      if (isNew && !this.nodeGpus.has(node.name)) this.nodeNames = undefined
      if (this.readings.size > this.readingNodes) {
        const oldest = this.readings.keys().next().value
        if (oldest !== undefined) this.forgetReading(oldest)
      }
    } else if (observation._tag === "NodeGone" && observation.reason === "node-deleted") {
      this.forgetReading(observation.node.name)
    }
  }

  /** Takes a batch of exported events into the ring and the histories. */
  record(events: ReadonlyArray<InventoryEvent>): void {
    for (const { record } of events) {
      if (this.ring.length > 0) {
        this.ring[this.ringNext] = record
        this.ringNext = (this.ringNext + 1) % this.ring.length
        this.ringSize = Math.min(this.ringSize + 1, this.ring.length)
      }
      if (historyKinds.has(record.event)) this.remember(record)
    }
  }

  /** The ring's events, newest first. */
  *recentEvents(): Generator<GpuRecord> {
    const length = this.ring.length
    for (let back = 1; back <= this.ringSize; back++) {
      const record = this.ring[(this.ringNext - back + length) % length]
      if (record !== undefined) yield record
    }
  }

  /** What this process saw of a GPU, newest first, and whether entries were dropped. */
  history(uuid: string): { readonly entries: ReadonlyArray<HistoryEntry>; readonly dropped: boolean } | undefined {
    const kept = this.histories.get(uuid)
    if (kept === undefined) return undefined
    return { entries: entriesOf(kept).toReversed(), dropped: this.droppedHistories.has(uuid) }
  }

  /** Every node known: with GPUs, or with a reading; by name. */
  nodes(): ReadonlyArray<string> {
    if (this.nodeNames === undefined) {
      const names = new Set([...this.nodeGpus.keys(), ...this.readings.keys()])
      this.nodeNames = [...names].sort()
    }
    return this.nodeNames
  }

  private forgetReading(name: string): void {
    if (this.readings.delete(name) && !this.nodeGpus.has(name)) this.nodeNames = undefined
  }

  /** Files the GPU at its node; `arrived`: when it arrived there, when known better than its first sighting. */
  private put(known: KnownGpu, cluster: string, arrived?: Date): void {
    const before = this.gpus.get(known.uuid)
    const across = this.options.acrossClusters === true
    const place = across ? this.values.text(clusterNode(cluster, known.node)) : known.node
    const beforeNode = before === undefined ? undefined : this.placeOf(before)
    const since =
      before === undefined ? (arrived ?? known.firstSeen) : beforeNode === place ? before.since : known.lastSeen
    const [node, chassis, product] = sharedNamesOf(known)
    const lowerSerial = lower(known.gpu.serial ?? "")
    // A key equal to the entry's is the entry's string.
    const serialKey = lowerSerial === before?.serialKey ? before.serialKey : lowerSerial
    const nodeKey = this.shared.hold(node)
    const chassisKey = this.shared.hold(chassis)
    const productKey = this.shared.hold(product)
    // One literal for each kind of view, so that every entry of a view has the same fields.
    const fields: FleetGpu = across
      ? { known, cluster, place, since, serialKey, nodeKey, chassisKey, productKey }
      : { known, since, serialKey, nodeKey, chassisKey, productKey }
    if (before !== undefined) for (const name of sharedNamesOf(before.known)) this.shared.release(name)
    // The indexes hear of the keys that change, before the entry does.
    for (const [index, field] of this.indexes) {
      if (before === undefined) index.changing(known.uuid, undefined)
      else if (before[field] !== fields[field]) {
        index.changing(known.uuid, field === "nodeKey" ? before[field] : orUndefined(before[field]))
      }
    }
    if (before === undefined) {
      this.byUuid.changing(known.uuid, undefined)
      this.order.changing(known.uuid, undefined)
      this.ordered = undefined
    } else if (this.compareOrder(before, fields) !== 0) {
      this.order.changing(known.uuid, this.orderKeyOf(before))
      this.ordered = undefined
    }
    // One entry per GPU for its lifetime here, changed in place: the cached list order can hold it.
    if (before === undefined) this.gpus.set(known.uuid, fields)
    else Object.assign(before as Mutable<FleetGpu>, fields)
    if (beforeNode !== undefined && beforeNode !== place) this.leaveNode(beforeNode, known.uuid)
    if (beforeNode === undefined || beforeNode !== place) {
      const onNode = this.nodeGpus.get(place)
      if (onNode === undefined) {
        this.nodeGpus.set(place, [known.uuid])
        if (!this.readings.has(place)) this.nodeNames = undefined
      } else if (!onNode.includes(known.uuid)) {
        // A copy of the exact length: an array pushed or spread to keeps room for 16 more.
        this.nodeGpus.set(place, onNode.concat(known.uuid))
      }
    }
  }

  private drop(uuid: string): void {
    const before = this.gpus.get(uuid)
    if (before === undefined) return
    this.bySerial.changing(uuid, orUndefined(before.serialKey))
    this.byUuid.changing(uuid, uuidKey(uuid))
    this.byNode.changing(uuid, before.nodeKey)
    this.byChassis.changing(uuid, orUndefined(before.chassisKey))
    this.order.changing(uuid, this.orderKeyOf(before))
    this.ordered = undefined
    this.gpus.delete(uuid)
    for (const name of sharedNamesOf(before.known)) this.shared.release(name)
    this.leaveNode(this.placeOf(before), uuid)
  }

  private leaveNode(node: string, uuid: string): void {
    const onNode = this.nodeGpus.get(node)
    if (onNode === undefined) return
    const at = onNode.indexOf(uuid)
    if (at >= 0) onNode.splice(at, 1)
    if (onNode.length === 0) {
      this.nodeGpus.delete(node)
      if (!this.readings.has(node)) this.nodeNames = undefined
    }
  }

  private remember(record: GpuRecord): void {
    // The UUID the view holds already, not the record's copy of it.
    const uuid = this.gpus.get(record.uuid)?.known.uuid ?? record.uuid
    const kept = this.histories.get(uuid)
    if (kept === undefined) {
      if (this.histories.size >= this.historyGpus) this.forgetOldestHistory()
    } else this.histories.delete(uuid)
    const made = historyEntry(record, this.values, this.options.acrossClusters === true)
    const entry = this.lastEntry !== undefined && sameEntry(this.lastEntry, made) ? this.lastEntry : made
    this.lastEntry = entry
    const before = kept === undefined ? [] : entriesOf(kept)
    this.historyEntryCount++
    // Re-inserted: the map's order is the order GPUs were last heard of. A new array of the exact length:
    // one pushed to keeps room for 16 more, and most GPUs have one or two entries.
    if (before.length === 0) this.histories.set(uuid, entry)
    else if (before.length >= this.historyPerGpu) {
      this.histories.set(uuid, before.slice(1).concat(entry))
      this.droppedHistories.add(uuid)
      this.historyEntryCount--
    } else this.histories.set(uuid, before.concat(entry))
    while (this.historyEntryCount > this.historyEntries) {
      const oldest = this.histories.keys().next().value
      if (oldest === undefined || oldest === uuid) break
      this.forgetOldestHistory()
    }
  }

  /** Forgets the history of the GPU heard of longest ago. */
  private forgetOldestHistory(): void {
    const [oldest, forgotten] = this.histories.entries().next().value ?? []
    if (oldest === undefined || forgotten === undefined) return
    this.histories.delete(oldest)
    this.droppedHistories.delete(oldest)
    this.historyEntryCount -= entriesOf(forgotten).length
  }
}

/** A GPU's history entries as `histories` holds them: one bare, more in an array. */
const entriesOf = (kept: HistoryEntry | ReadonlyArray<HistoryEntry>): ReadonlyArray<HistoryEntry> =>
  isEntryList(kept) ? kept : [kept]

const isEntryList = (kept: HistoryEntry | ReadonlyArray<HistoryEntry>): kept is ReadonlyArray<HistoryEntry> =>
  Array.isArray(kept)

/** How a history entry's texts are kept: the one string of names and of recent times many entries repeat. */
export interface EntryTexts {
  readonly text: (value: string) => string
  readonly timeText: (time: string) => string
}

const ownTexts: EntryTexts = { text: (value) => value, timeText: (time) => time }

/** A record as one entry of a GPU's history, with its cluster on a hub (`withCluster`). */
export const historyEntry = (record: GpuRecord, texts: EntryTexts = ownTexts, withCluster = false): HistoryEntry => {
  const text = (value: string) => texts.text(value)
  return {
    time: texts.timeText(record.time),
    event: text(record.event),
    node: text(record.node),
    machine: text(record.machine),
    chassis: text(record.chassis),
    ...(record.health === undefined ? {} : { healthState: text(record.health.state) }),
    ...(record.previousHealthState === undefined ? {} : { previousHealthState: text(record.previousHealthState) }),
    ...(record.previousNode === undefined ? {} : { previousNode: text(record.previousNode) }),
    ...(record.previousMachine === undefined ? {} : { previousMachine: text(record.previousMachine) }),
    ...(record.previousCluster === undefined ? {} : { previousCluster: text(record.previousCluster) }),
    ...(withCluster ? { cluster: text(record.cluster) } : {}),
  }
}

const entryFields = [
  "time",
  "event",
  "node",
  "machine",
  "chassis",
  "healthState",
  "previousHealthState",
  "previousNode",
  "previousMachine",
  "cluster",
  "previousCluster",
] as const satisfies ReadonlyArray<keyof HistoryEntry>

/** Whether two entries say the same; entries are never changed, so equal ones can be one object. */
const sameEntry = (a: HistoryEntry, b: HistoryEntry): boolean => entryFields.every((field) => a[field] === b[field])
