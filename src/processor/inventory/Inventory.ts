import type { Gpu } from "../../domain/Gpu.ts"
import type { GpuHealth } from "../../domain/GpuHealth.ts"
import { sharedSerials } from "../../domain/GpuRecordBuilder.ts"
import {
  defaultHealthThresholds,
  type HealthThresholds,
  healthChanged,
  readingHealth,
  sameHealth,
} from "../../domain/HealthVerdict.ts"
import { type InventoryChange, remove, upsert, upsertFrom } from "../../domain/InventoryChange.ts"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import { type GpuFacts, type KnownGpu, knownGpuEvent, reportedAt, sameFacts } from "../../domain/KnownGpu.ts"
import type { NodeObservation, PodRef } from "../../domain/NodeObservation.ts"
import { machineIdentity } from "../../domain/ProviderId.ts"
import type { InventorySnapshot } from "../../metrics/ServiceMetrics.ts"
import type { InventoryConfig } from "./InventoryConfig.ts"
import { NodeGpus } from "./NodeGpus.ts"
import { provesAbsent } from "./ReadingCoverage.ts"
import { ShardedIndex, type ShardedIndexEdit } from "./ShardedIndex.ts"
import { SharedGpuFacts } from "./SharedGpuFacts.ts"
import { SharedVerdicts } from "./SharedVerdicts.ts"

/**
 * The known inventory and how observations change it (PRODUCT.md §4), as plain functions over plain
 * data: time comes with each observation, or as `now` for `tick`.
 *
 * Rules:
 * - `NodeRead`: a GPU (by UUID, never by serial) known nowhere is `added`; known on another node or
 *   machine it is `moved` there (and not `removed` from where it was); known here with other record
 *   facts (driver, MIG mode, index, ...) it is `observed` at once; unchanged, it is `observed` when its
 *   last event is `reportIntervalMs` old. A GPU the node had that the reading proves absent (see
 *   `provesAbsent`: a partial reading proves absent only what it certainly does not have) is missing:
 *   it is `removed` once it has been missing for `removalGraceMs`, unless it shows up on another node
 *   first (then it is `moved`) or on its own node again (then nothing happened). So a swap of GPUs
 *   between two nodes is two `moved` events, whichever node is read first, never `removed` + `added`.
 *   A reading older than the last one applied to its node is ignored, and a GPU that a newer reading
 *   placed on another node stays there.
 * - Health: each GPU of a reading that reports its condition gets the verdict on it (`healthVerdict`,
 *   under `health` thresholds). A known GPU whose verdict changes state or reasons gets a `health`
 *   event with the new health and the state before (after its `moved` or `observed`, if any); a counter
 *   that changes alone is kept, not reported. A GPU first seen has no `health` event (its `added`
 *   carries the health), and neither has a GPU whose previous health is unknown (a reading or a store
 *   that said nothing of it): unknown to known is no change of condition.
 * - `NodeReadFailed`: no events; the node keeps its GPUs.
 * - `NodeGone`: the node keeps its GPUs for `removalGraceMs`; a reading taken after the gone news
 *   cancels the removal (a restarted device-plugin pod), and so does a failed attempt on a pod its GPUs
 *   were not read from, when the news was of the pod (the pod came back; its first reading failed);
 *   otherwise `tick` removes them once due.
 * - `tick`: removes the GPUs whose node or whose own absence has outlasted the grace, and re-affirms
 *   every other GPU whose last event is `reportIntervalMs` old, from its last known facts, so periodic
 *   reports do not depend on nodes being read again (the receiver reads a pod when it changes, and on
 *   resync only). GPUs of nodes reported gone and missing GPUs are not re-affirmed.
 * - `ClusterListed`: a known node missing from the receiver's first list of the cluster, or listed
 *   without a device-plugin pod, went while no one watched: it is gone (node or pod deleted) since the
 *   list, as if the news had come then, so its GPUs are removed a grace later unless a reading shows it.
 * - Inventories rebuilt from a durable store start with every node unconfirmed: a node that no reading
 *   or failed attempt confirms within `max(removalGraceMs, reportIntervalMs)` is taken as gone while
 *   the service was down, and its GPUs are removed.
 * - `removed` records carry the time the removal was decided (`now` of the tick that decides it); the
 *   others the time of the reading, or of the tick that re-affirms them.
 */

/** Why a node's GPUs are about to be removed, and when. */
export interface PendingRemoval {
  /** The device-plugin pod or the node was reported gone, or the node came from a store and nothing has confirmed it since. */
  readonly reason: "pod-deleted" | "node-deleted" | "unconfirmed"
  readonly since: Date
  readonly due: Date
}

/** The GPUs known on one node. A node without GPUs is not kept. */
export interface KnownNode {
  readonly name: string
  /** By UUID. */
  readonly gpus: ReadonlyMap<string, KnownGpu>
  /** GPUs of `gpus` that a reading of the node proved absent, with the time of the first such reading. */
  readonly missing: ReadonlyMap<string, Date>
  /** Time of the last reading applied to the node. */
  readonly lastRead?: Date
  readonly removal?: PendingRemoval
  /** The oldest `lastReported` of its GPUs that are not missing: whether a report is due, without visiting each GPU. */
  readonly oldestReport?: Date
}

export interface Inventory {
  /** By node name. */
  readonly nodes: ShardedIndex<KnownNode>
  /** The node of every known GPU, by UUID: one location per GPU. */
  readonly locations: ShardedIndex<string>
}

/** The inventory after an observation or a tick, the events to export, and the changes to persist. */
export interface Transition {
  readonly state: Inventory
  readonly events: ReadonlyArray<InventoryEvent>
  readonly changes: ReadonlyArray<InventoryChange>
}

/** The inventory's config as its rules apply it, with the cluster every record names. */
export type InventoryRules = Pick<InventoryConfig, "reportIntervalMs" | "removalGraceMs"> & {
  readonly cluster: string
  /** The limits of the health verdict; the published ones unless given. */
  readonly health?: HealthThresholds
  /**
   * Where equal verdicts and details are kept once across readings (the processor holds one); without it,
   * equal verdicts are shared within a reading only.
   */
  readonly verdicts?: SharedVerdicts
  /**
   * Where the texts and platforms many GPUs repeat are kept once across readings (the processor holds one);
   * without it, they are shared within a reading only.
   */
  readonly facts?: SharedGpuFacts
}

export const empty: Inventory = { nodes: ShardedIndex.empty(), locations: ShardedIndex.empty() }

const unchanged = (state: Inventory): Transition => ({ state, events: [], changes: [] })

const byIndex = (a: KnownGpu, b: KnownGpu): number =>
  a.gpu.index - b.gpu.index || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0)

const byName = (a: KnownNode, b: KnownNode): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** The `missing` of nodes that miss no GPU: most nodes, so they share one. */
const noneMissing: ReadonlyMap<string, Date> = new Map()

/** A node entry over `gpus`, or none when it has no GPUs left. */
const knownNode = (
  name: string,
  gpus: ReadonlyMap<string, KnownGpu>,
  missing: ReadonlyMap<string, Date>,
  lastRead: Date | undefined,
  removal: PendingRemoval | undefined,
): KnownNode | undefined => {
  if (gpus.size === 0) return undefined
  let oldest: Date | undefined
  for (const known of gpus.values()) {
    if (missing.has(known.uuid)) continue
    if (oldest === undefined || known.lastReported < oldest) oldest = known.lastReported
  }
  return {
    name,
    gpus: NodeGpus.of(gpus),
    missing: missing.size === 0 ? noneMissing : missing,
    ...(oldest === undefined ? {} : { oldestReport: oldest }),
    ...(lastRead === undefined ? {} : { lastRead }),
    ...(removal === undefined ? {} : { removal }),
  }
}

/** How many repeated facts one reading can hold apart, without a table kept across readings. */
const readingFactsBound = 256

/** How many verdicts and details one reading can hold apart: 8 GPUs of 4 or 5 kinds of detail each, and more. */
const readingVerdictsBound = 256

/**
 * The verdicts of one reading, where equal verdicts are one frozen object: the one the GPU had when
 * nothing changed, else the one `shared` keeps (one shared by the reading's GPUs in the same condition
 * at least, most of a healthy node).
 */
const keptVerdicts = (
  gpus: ReadonlyArray<Gpu>,
  thresholds: HealthThresholds,
  previous: (uuid: string) => GpuHealth | undefined,
  shared: SharedVerdicts | undefined,
): ReadonlyMap<string, GpuHealth> => {
  const verdicts = readingHealth(gpus, thresholds)
  if (verdicts.size === 0) return verdicts
  const kept = new Map<string, GpuHealth>()
  let table = shared
  for (const [uuid, verdict] of verdicts) {
    const before = previous(uuid)
    if (before !== undefined && sameHealth(before, verdict)) {
      kept.set(uuid, before)
      continue
    }
    table ??= new SharedVerdicts(readingVerdictsBound)
    kept.set(uuid, table.verdict(verdict))
  }
  return kept
}

const setNode = (nodes: ShardedIndexEdit<KnownNode>, name: string, entry: KnownNode | undefined): void => {
  if (entry === undefined) nodes.delete(name)
  else nodes.set(name, entry)
}

const dropGpu = (nodes: ShardedIndexEdit<KnownNode>, name: string, uuid: string): void => {
  const entry = nodes.get(name)
  if (entry === undefined) return
  const gpus = new Map(entry.gpus)
  gpus.delete(uuid)
  const missing = new Map(entry.missing)
  missing.delete(uuid)
  setNode(nodes, name, knownNode(name, gpus, missing, entry.lastRead, entry.removal))
}

/** `state` with one node's entry replaced, or removed when `entry` is undefined. */
const withNode = (state: Inventory, name: string, entry: KnownNode | undefined): Inventory => {
  const nodes = state.nodes.edit()
  setNode(nodes, name, entry)
  return { ...state, nodes: nodes.done() }
}

const reportDue = (lastReported: Date | undefined, now: Date, settings: InventoryRules): boolean =>
  lastReported !== undefined &&
  settings.reportIntervalMs > 0 &&
  now.getTime() - lastReported.getTime() >= settings.reportIntervalMs

const graceOver = (since: Date, now: Date, settings: InventoryRules): boolean =>
  now.getTime() - since.getTime() >= settings.removalGraceMs

const missingPastGrace = (entry: KnownNode, now: Date, settings: InventoryRules): boolean => {
  for (const since of entry.missing.values()) if (graceOver(since, now, settings)) return true
  return false
}

/** Whether an observation at `time` shows the node present after its removal was scheduled. */
const confirms = (removal: PendingRemoval, time: Date): boolean => time >= removal.since

type NodeRead = Extract<NodeObservation, { readonly _tag: "NodeRead" }>
type NodeReadFailed = Extract<NodeObservation, { readonly _tag: "NodeReadFailed" }>
type NodeGone = Extract<NodeObservation, { readonly _tag: "NodeGone" }>
type ClusterListed = Extract<NodeObservation, { readonly _tag: "ClusterListed" }>

const read = (state: Inventory, observation: NodeRead, settings: InventoryRules): Transition => {
  const { node, time, reading } = observation
  const entry = state.nodes.get(node.name)
  if (entry?.lastRead !== undefined && time < entry.lastRead) return unchanged(state)
  const repeated = settings.facts ?? new SharedGpuFacts(readingFactsBound)
  const pod: PodRef = { namespace: repeated.text(observation.pod.namespace), name: observation.pod.name }
  const machine = machineIdentity(node.providerId).machine
  const providerId = node.providerId === undefined || node.providerId.trim() === "" ? undefined : node.providerId
  const shared = sharedSerials(reading.gpus)
  const events: Array<InventoryEvent> = []
  const changes: Array<InventoryChange> = []
  const nodes = state.nodes.edit()
  const locations = state.locations.edit()
  const here = new Map<string, KnownGpu>()
  const reported = new Set<string>()
  const knownAs = (uuid: string): KnownGpu | undefined => {
    const where = locations.get(uuid)
    return where === undefined ? undefined : nodes.get(where)?.gpus.get(uuid)
  }
  const verdicts = keptVerdicts(
    reading.gpus,
    settings.health ?? defaultHealthThresholds,
    (uuid) => knownAs(uuid)?.health,
    settings.verdicts,
  )

  for (const gpu of reading.gpus) {
    if (reported.has(gpu.uuid)) continue
    reported.add(gpu.uuid)
    const health = verdicts.get(gpu.uuid)
    const facts: GpuFacts = {
      gpu: repeated.gpu(gpu),
      ...(reading.driverVersion === undefined ? {} : { driverVersion: repeated.text(reading.driverVersion) }),
      ...(reading.cudaVersion === undefined ? {} : { cudaVersion: repeated.text(reading.cudaVersion) }),
      ...(providerId === undefined ? {} : { providerId }),
      serialShared: gpu.serial !== undefined && shared.has(gpu.serial),
    }
    // One literal of every field, in the order of `facts` and then the rest: V8 sizes it for them all.
    const located = (firstSeen: Date, lastReported: Date): KnownGpu => ({
      gpu: facts.gpu,
      ...(facts.driverVersion === undefined ? {} : { driverVersion: facts.driverVersion }),
      ...(facts.cudaVersion === undefined ? {} : { cudaVersion: facts.cudaVersion }),
      ...(facts.providerId === undefined ? {} : { providerId: facts.providerId }),
      serialShared: facts.serialShared,
      uuid: gpu.uuid,
      node: node.name,
      ...(node.uid === undefined ? {} : { nodeUid: node.uid }),
      machine,
      pod,
      ...(health === undefined ? {} : { health }),
      firstSeen,
      lastSeen: time,
      lastReported,
    })
    const where = locations.get(gpu.uuid)
    const known = where === undefined ? undefined : nodes.get(where)?.gpus.get(gpu.uuid)
    const healthNews =
      known?.health !== undefined && health !== undefined && healthChanged(known.health, health)
        ? known.health.state
        : undefined
    let next: KnownGpu
    let reportedNow = true
    if (known === undefined) {
      next = located(time, time)
      events.push(
        knownGpuEvent({
          known: next,
          event: "added",
          cluster: settings.cluster,
          time,
          reportIntervalMs: settings.reportIntervalMs,
        }),
      )
    } else if (known.node !== node.name || known.machine !== machine) {
      // A reading taken before the one that placed the GPU elsewhere is old news about it.
      if (known.node !== node.name && known.lastSeen > time) continue
      next = located(known.firstSeen, time)
      events.push(
        knownGpuEvent({
          known: next,
          event: "moved",
          cluster: settings.cluster,
          time,
          previous: { node: known.node, machine: known.machine },
          reportIntervalMs: settings.reportIntervalMs,
        }),
      )
      if (known.node !== node.name) dropGpu(nodes, known.node, gpu.uuid)
    } else {
      const factsChanged = !sameFacts(known, facts)
      reportedNow = factsChanged || healthNews !== undefined || reportDue(known.lastReported, time, settings)
      next = located(known.firstSeen, reportedNow ? time : known.lastReported)
      // A health event re-affirms the GPU as well as an `observed` would.
      if (factsChanged || (reportedNow && healthNews === undefined))
        events.push(
          knownGpuEvent({
            known: next,
            event: "observed",
            cluster: settings.cluster,
            time,
            reportIntervalMs: settings.reportIntervalMs,
          }),
        )
    }
    if (healthNews !== undefined)
      events.push(
        knownGpuEvent({
          known: next,
          event: "health",
          cluster: settings.cluster,
          time,
          previousHealthState: healthNews,
          reportIntervalMs: settings.reportIntervalMs,
        }),
      )
    if (reportedNow) changes.push(known === undefined ? upsert(next) : upsertFrom(next, known.node))
    here.set(gpu.uuid, next)
    if (where !== node.name) locations.set(gpu.uuid, node.name)
  }

  const missing = new Map(entry?.missing)
  if (entry !== undefined) {
    const absent = provesAbsent(reading)
    for (const known of entry.gpus.values()) {
      if (reported.has(known.uuid)) {
        missing.delete(known.uuid)
        continue
      }
      here.set(known.uuid, known)
      if (!missing.has(known.uuid) && absent(known.gpu)) missing.set(known.uuid, time)
    }
  }

  const removal = entry?.removal !== undefined && !confirms(entry.removal, time) ? entry.removal : undefined
  setNode(nodes, node.name, knownNode(node.name, here, missing, time, removal))
  return { state: { nodes: nodes.done(), locations: locations.done() }, events, changes }
}

/** Whether none of the node's GPUs was read from `pod`: a device-plugin pod that replaced the one they came from. */
const replacementPod = (entry: KnownNode, pod: PodRef): boolean => {
  for (const known of entry.gpus.values())
    if (known.pod.namespace === pod.namespace && known.pod.name === pod.name) return false
  return true
}

const readFailed = (state: Inventory, observation: NodeReadFailed): Transition => {
  const entry = state.nodes.get(observation.node.name)
  const removal = entry?.removal
  if (entry === undefined || removal === undefined || !confirms(removal, observation.time)) return unchanged(state)
  // An attempt on a live pod confirms a node rebuilt from a store, and one on the pod that replaced a deleted
  // one shows the pod back (the node keeps its GPUs, as on any failed reading); a late failure of the deleted
  // pod itself, or any failure on a node reported deleted, says nothing.
  const back =
    removal.reason === "unconfirmed" || (removal.reason === "pod-deleted" && replacementPod(entry, observation.pod))
  if (!back) return unchanged(state)
  return unchanged(
    withNode(state, entry.name, knownNode(entry.name, entry.gpus, entry.missing, entry.lastRead, undefined)),
  )
}

const gone = (state: Inventory, observation: NodeGone, settings: InventoryRules): Transition => {
  const entry = state.nodes.get(observation.node.name)
  if (entry === undefined) return unchanged(state)
  // A reading taken after the gone news (a restarted pod read first) proves the node present.
  if (entry.lastRead !== undefined && observation.time < entry.lastRead) return unchanged(state)
  const due = new Date(observation.time.getTime() + settings.removalGraceMs)
  if (entry.removal !== undefined && entry.removal.due <= due) return unchanged(state)
  const removal: PendingRemoval = { reason: observation.reason, since: observation.time, due }
  return unchanged(
    withNode(state, entry.name, knownNode(entry.name, entry.gpus, entry.missing, entry.lastRead, removal)),
  )
}

const listed = (state: Inventory, observation: ClusterListed, settings: InventoryRules): Transition => {
  let next = state
  for (const entry of state.nodes.values()) {
    const reason = !observation.nodes.has(entry.name)
      ? "node-deleted"
      : observation.nodesWithPod.has(entry.name)
        ? undefined
        : "pod-deleted"
    if (reason === undefined) continue
    next = gone(next, { _tag: "NodeGone", node: { name: entry.name }, time: observation.time, reason }, settings).state
  }
  return unchanged(next)
}

/** The inventory after one observation, and the events and store changes it causes. */
export const transition = (state: Inventory, observation: NodeObservation, settings: InventoryRules): Transition => {
  switch (observation._tag) {
    case "NodeRead":
      return read(state, observation, settings)
    case "NodeReadFailed":
      return readFailed(state, observation)
    case "NodeGone":
      return gone(state, observation, settings)
    case "ClusterListed":
      return listed(state, observation, settings)
  }
}

/**
 * What time alone changes at `now`: the GPUs of nodes gone past their grace and the GPUs missing past
 * it are removed, then the periodic reports due are made.
 */
export const tick = (state: Inventory, now: Date, settings: InventoryRules): Transition => {
  const expired: Array<KnownNode> = []
  const touched: Array<KnownNode> = []
  for (const entry of state.nodes.values()) {
    if (entry.removal !== undefined && entry.removal.due <= now) {
      expired.push(entry)
      continue
    }
    const reporting = entry.removal === undefined && reportDue(entry.oldestReport, now, settings)
    if (reporting || missingPastGrace(entry, now, settings)) touched.push(entry)
  }
  if (expired.length === 0 && touched.length === 0) return unchanged(state)

  const events: Array<InventoryEvent> = []
  const changes: Array<InventoryChange> = []
  const nodes = state.nodes.edit()
  const locations = state.locations.edit()
  const removeGpu = (known: KnownGpu) => {
    events.push(
      knownGpuEvent({
        known,
        event: "removed",
        cluster: settings.cluster,
        time: now,
        reportIntervalMs: settings.reportIntervalMs,
      }),
    )
    changes.push(remove(known))
    locations.delete(known.uuid)
  }
  for (const entry of expired.sort(byName)) {
    for (const known of [...entry.gpus.values()].sort(byIndex)) removeGpu(known)
    nodes.delete(entry.name)
  }
  for (const entry of touched.sort(byName)) {
    const gpus = new Map<string, KnownGpu>()
    const missing = new Map(entry.missing)
    for (const known of [...entry.gpus.values()].sort(byIndex)) {
      const missingSince = entry.missing.get(known.uuid)
      if (missingSince !== undefined && graceOver(missingSince, now, settings)) {
        removeGpu(known)
        missing.delete(known.uuid)
        continue
      }
      if (missingSince !== undefined || entry.removal !== undefined || !reportDue(known.lastReported, now, settings)) {
        gpus.set(known.uuid, known)
        continue
      }
      const next = reportedAt(known, now)
      events.push(
        knownGpuEvent({
          known: next,
          event: "observed",
          cluster: settings.cluster,
          time: now,
          reportIntervalMs: settings.reportIntervalMs,
        }),
      )
      changes.push(upsert(next))
      gpus.set(known.uuid, next)
    }
    setNode(nodes, entry.name, knownNode(entry.name, gpus, missing, entry.lastRead, entry.removal))
  }
  return { state: { nodes: nodes.done(), locations: locations.done() }, events, changes }
}

/**
 * The inventory a durable store knew, as of `loadedAt`. Where the store holds a UUID twice, the
 * latest sighting wins. Every node starts unconfirmed (see the rules above).
 */
export const fromKnown = (gpus: Iterable<KnownGpu>, loadedAt: Date, settings: InventoryRules): Inventory => {
  const latest = new Map<string, KnownGpu>()
  for (const known of gpus) {
    const seen = latest.get(known.uuid)
    if (seen === undefined || known.lastSeen > seen.lastSeen) latest.set(known.uuid, known)
  }
  const byNode = new Map<string, Map<string, KnownGpu>>()
  for (const known of latest.values()) {
    const onNode = byNode.get(known.node) ?? new Map<string, KnownGpu>()
    onNode.set(known.uuid, known)
    byNode.set(known.node, onNode)
  }
  const removal: PendingRemoval = {
    reason: "unconfirmed",
    since: loadedAt,
    due: new Date(loadedAt.getTime() + Math.max(settings.removalGraceMs, settings.reportIntervalMs)),
  }
  const nodes = empty.nodes.edit()
  const locations = empty.locations.edit()
  for (const [name, onNode] of byNode) {
    setNode(nodes, name, knownNode(name, onNode, noneMissing, undefined, removal))
    for (const uuid of onNode.keys()) locations.set(uuid, name)
  }
  return { nodes: nodes.done(), locations: locations.done() }
}

/** Every known GPU, in no order, without sorting or copying: what gauges read at every collection. */
export function* everyKnownGpu(state: Inventory): Generator<KnownGpu> {
  for (const entry of state.nodes.values()) yield* entry.gpus.values()
}

/** Where a GPU is known to be now, if anywhere. */
export const locate = (state: Inventory, uuid: string): KnownGpu | undefined => {
  const where = state.locations.get(uuid)
  return where === undefined ? undefined : state.nodes.get(where)?.gpus.get(uuid)
}

/** GPU and node counts for the service's gauges; GPUs without a product name count as `unknown`. */
export const inventorySnapshot = (state: Inventory): InventorySnapshot => {
  const byModel = new Map<string, number>()
  let gpus = 0
  for (const entry of state.nodes.values()) {
    for (const known of entry.gpus.values()) {
      const model = known.gpu.product ?? "unknown"
      byModel.set(model, (byModel.get(model) ?? 0) + 1)
      gpus++
    }
  }
  return { gpus, nodes: state.nodes.size, gpusByModel: Object.fromEntries(byModel) }
}
