import { isJsonObject, type JsonObject } from "../api/Json.ts"
import { nodes, pods, resourceSlices } from "../api/ResourceKind.ts"
import { metadataOf, type ResourceStore, type StoreEvent } from "../api/ResourceStore.ts"
import type { Fleet } from "../catalog/Fleet.ts"
import type { SeededRandom } from "../catalog/SeededRandom.ts"
import { hostDevices, resourceSliceObject, type SliceDevice } from "./DraResourceSlice.ts"

/** How a published slice disagrees with its node: a GPU of the node missing, or a GPU that left still listed. */
export type SliceMismatchKind = "missing-from-slices" | "missing-from-reading"

export interface SliceMismatch {
  readonly uuid: string
  readonly kind: SliceMismatchKind
}

/** What the publisher tells the ground-truth ledger after each write. */
export interface SliceReport {
  published(node: string, slice: string, generation: number, listed: ReadonlyArray<string>): void
  mismatched(node: string, mismatch: SliceMismatch): void
}

export interface DraSlicePublisherOptions {
  /** Namespace of the kubelet-plugin pods. */
  readonly namespace: string
  /** Tells the GPU kubelet plugin's pods from other pods of the namespace. */
  readonly isPluginPod: (pod: JsonObject) => boolean
  readonly random: SeededRandom
  /** Probability, per slice write, that the slice lags its node by one GPU (a lagging plugin). */
  readonly mismatchRate: () => number
  readonly report: SliceReport
}

interface PublishedPool {
  readonly slice: string
  readonly generation: number
  readonly devices: ReadonlyArray<SliceDevice>
}

/**
 * The GPU kubelet plugin's resourceslice controller on every node: when the plugin starts it publishes
 * one pool named after the node in one slice (generation 1 when new; a restart updates that slice in
 * place, keeping the generation, with the devices in a new random order), and a node's slices go with it.
 */
export class DraSlicePublisher {
  private readonly store: ResourceStore
  private readonly fleet: Fleet
  private readonly options: DraSlicePublisherOptions
  private readonly pools = new Map<string, PublishedPool>()
  private readonly unsubscribes: Array<() => void>

  constructor(store: ResourceStore, fleet: Fleet, options: DraSlicePublisherOptions) {
    this.store = store
    this.fleet = fleet
    this.options = options
    this.unsubscribes = [
      store.subscribe(pods, (event) => this.onPod(event)),
      store.subscribe(nodes, (event) => this.onNode(event)),
    ]
  }

  /** The name of a node's slice, if it has one. */
  sliceOf(nodeName: string): string | undefined {
    return this.pools.get(nodeName)?.slice
  }

  /**
   * Publishes a node's devices as its plugin does on start. A host whose driver is broken publishes
   * nothing (the plugin cannot enumerate its GPUs), so an earlier slice stays as it was.
   */
  publish(nodeName: string): void {
    const host = this.fleet.host(nodeName)
    const node = this.store.get(nodes, "", nodeName)
    if (host === undefined || node === undefined || host.failure !== undefined) return
    const { random } = this.options
    const previous = this.pools.get(nodeName)
    let devices = hostDevices(host, random)
    let mismatch: SliceMismatch | undefined
    if (random.chance(this.options.mismatchRate())) {
      const present = new Set(devices.map((device) => device.gpuUuid))
      const departed = (previous?.devices ?? []).filter((device) => !present.has(device.gpuUuid))
      if (departed.length > 0 && (present.size === 0 || random.chance(0.5))) {
        const uuid = random.pick(departed).gpuUuid
        devices = [...devices, ...departed.filter((device) => device.gpuUuid === uuid)]
        mismatch = { uuid, kind: "missing-from-reading" }
      } else if (present.size > 0) {
        const uuid = random.pick([...present])
        devices = devices.filter((device) => device.gpuUuid !== uuid)
        mismatch = { uuid, kind: "missing-from-slices" }
      }
    }
    const existing = previous === undefined ? undefined : this.store.get(resourceSlices, "", previous.slice)
    const generation = existing === undefined ? 1 : (previous?.generation ?? 1)
    const object = resourceSliceObject({
      nodeName,
      nodeUid: String(metadataOf(node.object).uid ?? ""),
      generation,
      devices,
    })
    let name: string
    if (existing === undefined) {
      metadataOf(object).generation = 1
      name = this.store.create(resourceSlices, object).name
    } else {
      const before = metadataOf(existing.object)
      const metadata = metadataOf(object)
      metadata.name = existing.name
      const specChanged = JSON.stringify(object.spec) !== JSON.stringify(existing.object.spec)
      const objectGeneration = typeof before.generation === "number" ? before.generation : 1
      metadata.generation = specChanged ? objectGeneration + 1 : objectGeneration
      name = this.store.update(resourceSlices, object).name
    }
    this.pools.set(nodeName, { slice: name, generation, devices })
    this.options.report.published(nodeName, name, generation, [...new Set(devices.map((device) => device.gpuUuid))])
    if (mismatch !== undefined) this.options.report.mismatched(nodeName, mismatch)
  }

  close(): void {
    for (const unsubscribe of this.unsubscribes) unsubscribe()
  }

  private onPod(event: StoreEvent): void {
    if (event.type === "DELETED" || event.current.namespace !== this.options.namespace) return
    const pod = event.current.object
    if (!this.options.isPluginPod(pod) || !running(pod)) return
    if (event.previous !== undefined && running(event.previous.object)) return
    const spec = pod.spec
    if (isJsonObject(spec) && typeof spec.nodeName === "string") this.publish(spec.nodeName)
  }

  /** The garbage collector deletes the slices a Node owns once the Node is gone. */
  private onNode(event: StoreEvent): void {
    if (event.type !== "DELETED") return
    const nodeName = event.current.name
    this.pools.delete(nodeName)
    for (const stored of this.store.list(resourceSlices)) {
      const spec = stored.object.spec
      if (isJsonObject(spec) && spec.nodeName === nodeName) this.store.delete(resourceSlices, "", stored.name)
    }
  }
}

const running = (pod: JsonObject): boolean => isJsonObject(pod.status) && pod.status.phase === "Running"
