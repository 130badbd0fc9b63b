import type { JsonObject } from "../api/Json.ts"
import type { DeletionPolicy } from "../api/ObjectWrites.ts"
import { nodes, pods } from "../api/ResourceKind.ts"
import {
  metadataOf,
  type ResourceStore,
  type StoredObject,
  type StoreEvent,
  timestampOf,
} from "../api/ResourceStore.ts"
import type { Fleet } from "../catalog/Fleet.ts"
import type { SeededRandom } from "../catalog/SeededRandom.ts"
import { type DevicePluginPodSpec, devicePluginPod, type PodStage } from "./DevicePluginPod.ts"

/** How long the kubelet takes through each stage of a device-plugin pod's life. */
export interface PodTimings {
  /** Pending (ContainerCreating) until the containers run. */
  readonly startMs: number
  /** Running but not ready until the readiness of the device plugin passes. */
  readonly readyMs: number
  /** Terminating until the object is removed, for a graceful delete. */
  readonly terminationMs: number
}

export interface DaemonSetOptions {
  readonly namespace: string
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly container: string
  readonly timings: PodTimings
  readonly random: SeededRandom
  readonly now: () => Date
  /** The pod object for a stage of the pod's life; default the NVIDIA device plugin's. */
  readonly podTemplate?: (spec: DevicePluginPodSpec) => JsonObject
}

interface PodRecord {
  spec: DevicePluginPodSpec
  readonly timers: Set<NodeJS.Timeout>
}

const podNameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

/**
 * The NVIDIA device-plugin DaemonSet and the kubelets running it: one pod per GPU node, which goes
 * Pending → Running → Ready, terminates gracefully on delete and is replaced under a new name and uid,
 * and is garbage-collected with its node.
 */
export class DevicePluginDaemonSet {
  private readonly store: ResourceStore
  private readonly fleet: Fleet
  private readonly options: DaemonSetOptions
  private readonly records = new Map<string, PodRecord>()
  private readonly podByNode = new Map<string, string>()
  private readonly timers = new Set<NodeJS.Timeout>()
  private readonly daemonSetUid: string
  private readonly unsubscribes: Array<() => void> = []
  private podIpCounter = 0
  private closed = false

  constructor(store: ResourceStore, fleet: Fleet, options: DaemonSetOptions) {
    this.store = store
    this.fleet = fleet
    this.options = options
    this.daemonSetUid = options.random.uuid()
    this.unsubscribes.push(store.subscribe(pods, (event) => this.onPodEvent(event)))
    this.unsubscribes.push(store.subscribe(nodes, (event) => this.onNodeEvent(event)))
  }

  /** The current device-plugin pod of a node, if it has one. */
  podOf(nodeName: string): string | undefined {
    return this.podByNode.get(nodeName)
  }

  /** Which node a device-plugin pod runs on, if it is one of ours. */
  nodeOf(podName: string): string | undefined {
    return this.records.get(podName)?.spec.nodeName
  }

  /** Creates the pod of a node: already Ready (cluster start) or Pending, to walk through its stages. */
  schedule(nodeName: string, alreadyReady: boolean): string {
    const host = this.fleet.host(nodeName)
    if (host === undefined) throw new RangeError(`no GPU host "${nodeName}"`)
    const now = this.options.now()
    const random = this.options.random
    let name = `${this.options.name}-${random.chars(podNameAlphabet, 5)}`
    // Generated names collide now and then in large clusters; the controller simply draws another.
    while (this.records.has(name) || this.store.get(pods, this.options.namespace, name) !== undefined)
      name = `${this.options.name}-${random.chars(podNameAlphabet, 5)}`
    this.podIpCounter++
    const spec: DevicePluginPodSpec = {
      name,
      namespace: this.options.namespace,
      nodeName,
      hostIp: host.machine.internalIp,
      podIp: `10.244.${(this.podIpCounter >> 8) & 0xff}.${this.podIpCounter & 0xff}`,
      daemonSetName: this.options.name,
      daemonSetUid: this.daemonSetUid,
      labels: this.options.labels,
      container: this.options.container,
      containerIds: [random.hex(64), random.hex(64)],
      createdAt: now,
      startedAt: alreadyReady ? now : undefined,
      readyAt: alreadyReady ? now : undefined,
      stage: alreadyReady ? "ready" : "pending",
    }
    const record: PodRecord = { spec, timers: new Set() }
    this.records.set(name, record)
    this.podByNode.set(nodeName, name)
    this.store.create(pods, this.podObject(spec), this.options.namespace)
    if (!alreadyReady) {
      this.after(record, this.options.timings.startMs, () => {
        this.advance(record, "starting")
        this.after(record, this.options.timings.readyMs, () => this.advance(record, "ready"))
      })
    }
    return name
  }

  /** Deletes the pod of a node the way `kubectl delete pod` does; the DaemonSet then replaces it. */
  restart(nodeName: string): string {
    const name = this.podByNode.get(nodeName)
    if (name === undefined) throw new RangeError(`node "${nodeName}" has no device-plugin pod`)
    const stored = this.store.require(pods, this.options.namespace, name)
    this.terminate(stored, undefined)
    return name
  }

  /** Marks the pod of a node not ready (a failing readiness probe) or ready again. */
  setReady(nodeName: string, ready: boolean): void {
    if (this.closed) return
    const name = this.podByNode.get(nodeName)
    const record = name === undefined ? undefined : this.records.get(name)
    if (record === undefined || record.spec.stage === "terminating" || record.spec.stage === "pending") return
    this.advance(record, ready ? "ready" : "starting")
  }

  /** Graceful pod deletion: Terminating with a deletionTimestamp first, removed when the grace period ends. */
  readonly deletion: DeletionPolicy = (stored, gracePeriodSeconds) => this.terminate(stored, gracePeriodSeconds)

  close(): void {
    this.closed = true
    for (const unsubscribe of this.unsubscribes) unsubscribe()
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
  }

  private terminate(stored: StoredObject, gracePeriodSeconds: number | undefined): StoredObject {
    const record = this.records.get(stored.name)
    const metadata = metadataOf(stored.object)
    if (gracePeriodSeconds === 0 || this.options.timings.terminationMs <= 0)
      return this.store.delete(pods, stored.namespace, stored.name)
    if (typeof metadata.deletionTimestamp === "string") return stored
    const grace = gracePeriodSeconds ?? 30
    const object = structuredClone(stored.object)
    const terminating = metadataOf(object)
    terminating.deletionTimestamp = timestampOf(new Date(this.options.now().getTime() + grace * 1000))
    terminating.deletionGracePeriodSeconds = grace
    markNotReady(object)
    const updated = this.store.update(pods, object)
    const finish = () => {
      if (this.store.get(pods, stored.namespace, stored.name) !== undefined)
        this.store.delete(pods, stored.namespace, stored.name)
    }
    if (record === undefined) this.later(this.options.timings.terminationMs, finish)
    else {
      record.spec = { ...record.spec, stage: "terminating" }
      for (const timer of record.timers) clearTimeout(timer)
      record.timers.clear()
      this.after(record, this.options.timings.terminationMs, finish)
    }
    return updated
  }

  private advance(record: PodRecord, stage: PodStage): void {
    const current = this.store.get(pods, record.spec.namespace, record.spec.name)
    if (current === undefined) return
    const now = this.options.now()
    record.spec = {
      ...record.spec,
      stage,
      startedAt: record.spec.startedAt ?? now,
      readyAt: stage === "ready" ? now : record.spec.readyAt,
    }
    const object = this.podObject(record.spec)
    const metadata = metadataOf(object)
    const existing = metadataOf(current.object)
    metadata.labels = existing.labels ?? metadata.labels ?? null
    metadata.annotations = existing.annotations ?? metadata.annotations ?? null
    this.store.update(pods, object)
  }

  private podObject(spec: DevicePluginPodSpec): JsonObject {
    return (this.options.podTemplate ?? devicePluginPod)(spec)
  }

  private onPodEvent(event: StoreEvent): void {
    if (event.type !== "DELETED") return
    const record = this.records.get(event.current.name)
    if (record === undefined || event.current.namespace !== this.options.namespace) return
    for (const timer of record.timers) clearTimeout(timer)
    this.records.delete(event.current.name)
    const nodeName = record.spec.nodeName
    if (this.podByNode.get(nodeName) !== event.current.name) return
    this.podByNode.delete(nodeName)
    if (this.closed || this.fleet.host(nodeName) === undefined || this.store.get(nodes, "", nodeName) === undefined)
      return
    this.later(0, () => {
      if (
        !this.podByNode.has(nodeName) &&
        this.fleet.host(nodeName) !== undefined &&
        this.store.get(nodes, "", nodeName)
      )
        this.schedule(nodeName, false)
    })
  }

  private onNodeEvent(event: StoreEvent): void {
    if (event.type !== "DELETED") return
    const nodeName = event.current.name
    this.fleet.removeHost(nodeName)
    const name = this.podByNode.get(nodeName)
    if (name !== undefined && this.store.get(pods, this.options.namespace, name) !== undefined)
      this.store.delete(pods, this.options.namespace, name)
  }

  private after(record: PodRecord, delayMs: number, action: () => void): void {
    const timer = setTimeout(() => {
      record.timers.delete(timer)
      this.timers.delete(timer)
      if (!this.closed) action()
    }, delayMs)
    record.timers.add(timer)
    this.timers.add(timer)
  }

  private later(delayMs: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      if (!this.closed) action()
    }, delayMs)
    this.timers.add(timer)
  }
}

const markNotReady = (object: JsonObject): void => {
  const status = object.status
  if (typeof status !== "object" || status === null || Array.isArray(status)) return
  const conditions = status.conditions
  if (Array.isArray(conditions))
    for (const condition of conditions)
      if (
        typeof condition === "object" &&
        condition !== null &&
        !Array.isArray(condition) &&
        (condition.type === "Ready" || condition.type === "ContainersReady")
      )
        condition.status = "False"
  const statuses = status.containerStatuses
  if (Array.isArray(statuses))
    for (const containerStatus of statuses)
      if (typeof containerStatus === "object" && containerStatus !== null && !Array.isArray(containerStatus))
        containerStatus.ready = false
}
