import { createWriteStream, type WriteStream } from "node:fs"
import { finished } from "node:stream/promises"
import { isJsonObject, type JsonObject } from "../api/Json.ts"
import { nodes, pods } from "../api/ResourceKind.ts"
import { metadataOf, type ResourceStore, type StoreEvent } from "../api/ResourceStore.ts"
import type { Fleet } from "../catalog/Fleet.ts"
import type { GpuIdentity, SimulatedHost } from "../catalog/SimulatedHost.ts"
import { fatalFailure, lostGpuIndex } from "../nvidia-smi/DriverFailureOutput.ts"
import type { BoardPlace } from "./BoardPlace.ts"
import { FleetTruth, type GpuHistory, type GpuWhereabouts } from "./FleetTruth.ts"
import type { LedgerEntry, LedgerFact, PlacementCause } from "./LedgerEntry.ts"
import { ledgerLine } from "./LedgerJsonl.ts"
import { type TrueHealthState, trueHealthState } from "./TrueHealth.ts"

export interface ClusterLedgerOptions {
  readonly store: ResourceStore
  readonly fleet: Fleet
  /** Namespace of the device-plugin pods. */
  readonly namespace: string
  readonly now: () => Date
  /** A file the entries are written to as JSON lines, as they happen (replaced if it exists). */
  readonly path?: string
}

const podNode = (object: JsonObject): string => {
  const spec = object.spec
  return isJsonObject(spec) && typeof spec.nodeName === "string" ? spec.nodeName : ""
}

const podReady = (object: JsonObject): boolean => {
  const status = object.status
  if (!isJsonObject(status) || !Array.isArray(status.conditions)) return false
  return status.conditions.some(
    (condition) => isJsonObject(condition) && condition.type === "Ready" && condition.status === "True",
  )
}

const terminating = (object: JsonObject): boolean => typeof metadataOf(object).deletionTimestamp === "string"

/** The GPUs nvidia-smi on a host does not report while its driver fails. */
const hiddenGpus = (host: SimulatedHost): ReadonlyArray<string> => {
  if (host.failure === undefined) return []
  if (fatalFailure(host, host.failure) !== undefined) return host.gpus.map((gpu) => gpu.identity.uuid)
  const lost = host.gpus[lostGpuIndex(host)]
  return lost === undefined ? [] : [lost.identity.uuid]
}

/**
 * The ground truth of the simulated cluster: every node and device-plugin pod lifecycle change, read
 * from the API server's commits (so with the resourceVersion and time a watch sees), and every GPU's
 * placement, from the fleet, as it happens. It answers where each GPU is now and where it has been,
 * and writes its entries as JSON lines when given a path.
 */
export class ClusterLedger {
  private readonly options: ClusterLedgerOptions
  private readonly recorded: Array<LedgerEntry> = []
  private readonly truth = new FleetTruth()
  private readonly file: WriteStream | undefined
  private readonly unsubscribes: Array<() => void>
  private placement: PlacementCause = "cluster-start"
  private closed = false

  constructor(options: ClusterLedgerOptions) {
    this.options = options
    this.file = options.path === undefined ? undefined : createWriteStream(options.path, { flags: "w" })
    this.unsubscribes = [
      options.store.subscribe(nodes, (event) => this.onNode(event)),
      options.store.subscribe(pods, (event) => this.onPod(event)),
    ]
  }

  /** From now on, GPUs of new nodes were placed because their node joined, not at cluster start. */
  clusterStarted(): void {
    this.placement = "node-joined"
  }

  /** Records the GPUs of these hosts that are now on another node than before (a GPU swap). */
  gpusSwapped(hosts: ReadonlyArray<SimulatedHost>): void {
    for (const host of hosts)
      for (const gpu of host.gpus)
        if (this.truth.nodeOf(gpu.identity.uuid) !== host.machine.nodeName) this.place(host, gpu.identity, "gpu-swap")
  }

  /** Records a board of this cluster leaving for another cluster in swap number `swap`, at `time`. */
  gpuDeparted(host: SimulatedHost, identity: GpuIdentity, swap: number, to: BoardPlace, time: Date): void {
    this.record(
      {
        entry: "gpu-departed",
        uuid: identity.uuid,
        serial: identity.serial,
        node: host.machine.nodeName,
        providerId: host.machine.providerId,
        swap,
        toCluster: to.cluster,
        toNode: to.node,
        toProviderId: to.providerId,
      },
      undefined,
      time,
    )
  }

  /** Records a board from another cluster put on a host of this one in swap number `swap`, at `time`. */
  gpuArrived(host: SimulatedHost, identity: GpuIdentity, swap: number, from: BoardPlace, time: Date): void {
    this.record(
      {
        entry: "gpu-arrived",
        uuid: identity.uuid,
        serial: identity.serial,
        node: host.machine.nodeName,
        providerId: host.machine.providerId,
        swap,
        fromCluster: from.cluster,
        fromNode: from.node,
        fromProviderId: from.providerId,
        health: trueHealthState(identity.condition),
      },
      undefined,
      time,
    )
  }

  /** Records that a host's driver failed (which GPUs it hides) or was repaired. */
  driverChanged(host: SimulatedHost): void {
    const node = host.machine.nodeName
    if (host.failure === undefined) this.record({ entry: "driver-repaired", node })
    else this.record({ entry: "driver-failed", node, failure: host.failure, unreadable: hiddenGpus(host) })
  }

  /** Records that a GPU's health changed, on the node it is on. */
  healthChanged(host: SimulatedHost, uuid: string, from: TrueHealthState, to: TrueHealthState): void {
    this.record({ entry: "gpu-health", uuid, node: host.machine.nodeName, from, to })
  }

  /** Records that a node's ResourceSlice was written, with the GPUs it lists. */
  slicePublished(node: string, slice: string, generation: number, gpus: ReadonlyArray<string>): void {
    this.record({ entry: "slice-published", node, slice, generation, gpus })
  }

  /** Records an injected disagreement of a node's slice with the node. */
  draMismatch(node: string, uuid: string, kind: "missing-from-slices" | "missing-from-reading"): void {
    this.record({ entry: "dra-mismatch", node, uuid, kind })
  }

  /** Every entry so far, oldest first. */
  entries(): ReadonlyArray<LedgerEntry> {
    return this.recorded
  }

  /** Where each GPU of the cluster is now, by UUID. */
  whereNow(): ReadonlyMap<string, GpuWhereabouts> {
    return this.truth.whereNow()
  }

  /** Where a GPU has been, oldest stay first; undefined for a GPU the cluster never had. */
  history(uuid: string): GpuHistory | undefined {
    return this.truth.history(uuid)
  }

  /** Stops recording and finishes writing the file. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const unsubscribe of this.unsubscribes) unsubscribe()
    if (this.file !== undefined) {
      this.file.end()
      await finished(this.file)
    }
  }

  private onNode(event: StoreEvent): void {
    const node = event.current.name
    if (event.type === "ADDED") {
      const host = this.options.fleet.host(node)
      this.record({ entry: "node-joined", node, providerId: host?.machine.providerId ?? "" }, event.resourceVersion)
      if (host === undefined) return
      for (const gpu of host.gpus) this.place(host, gpu.identity, this.placement, event.resourceVersion)
      if (host.failure !== undefined) this.driverChanged(host)
      return
    }
    if (event.type !== "DELETED") return
    for (const uuid of this.truth.gpusOn(node)) this.record({ entry: "gpu-gone", uuid, node }, event.resourceVersion)
    this.record({ entry: "node-left", node }, event.resourceVersion)
  }

  private onPod(event: StoreEvent): void {
    if (event.current.namespace !== this.options.namespace) return
    const object = event.current.object
    const node = podNode(object)
    const pod = event.current.name
    const revision = event.resourceVersion
    switch (event.type) {
      case "ADDED":
        this.record({ entry: "pod-created", node, pod }, revision)
        if (podReady(object)) this.record({ entry: "pod-ready", node, pod }, revision)
        return
      case "MODIFIED": {
        const before = event.previous?.object
        if (terminating(object) && (before === undefined || !terminating(before)))
          this.record({ entry: "pod-terminating", node, pod }, revision)
        const ready = podReady(object)
        if (before === undefined || ready !== podReady(before))
          this.record({ entry: ready ? "pod-ready" : "pod-unready", node, pod }, revision)
        return
      }
      case "DELETED": {
        const reason = this.options.store.get(nodes, "", node) === undefined ? "node-left" : "restarted"
        this.record({ entry: "pod-deleted", node, pod, reason }, revision)
        return
      }
    }
  }

  private place(
    host: SimulatedHost,
    identity: { readonly uuid: string; readonly serial: string },
    cause: PlacementCause,
    revision?: number,
  ): void {
    this.record(
      {
        entry: "gpu-placed",
        uuid: identity.uuid,
        serial: identity.serial,
        node: host.machine.nodeName,
        providerId: host.machine.providerId,
        cause,
      },
      revision,
    )
  }

  private record(fact: LedgerFact, revision = this.options.store.currentRevision, time = this.options.now()): void {
    if (this.closed) return
    const entry = {
      seq: this.recorded.length + 1,
      time: time.toISOString(),
      resourceVersion: revision,
      ...fact,
    } as LedgerEntry
    this.recorded.push(entry)
    this.truth.apply(entry)
    this.file?.write(ledgerLine(entry))
  }
}
