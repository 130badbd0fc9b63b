import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { Health } from "../../../component/Component.ts"
import type { CacheChange } from "../../../kubeclient/cache/InformerCache.ts"
import * as ResourceInformer from "../../../kubeclient/cache/ResourceInformer.ts"
import {
  preferredSliceVersion,
  type ResourceSlice,
  type ResourceSliceVersion,
  resourceGroup,
  resourceSliceOf,
  resourceSlicesPath,
} from "../../../kubeclient/resource/ResourceSlice.ts"
import type { KubeApi } from "../../../kubeclient/rest/KubeApi.ts"
import type { KubeApiError } from "../../../kubeclient/rest/KubeApiError.ts"
import type { ServiceMetrics } from "../../../metrics/ServiceMetrics.ts"
import { type DraNodeDevices, draNodeDevicesOf, identityKeyOf, nvidiaGpuDriverSelector } from "./DraDevices.ts"

/** The NVIDIA GPU driver's ResourceSlices by node, as the receiver knows them from its informer. */
export interface DraSlices {
  /** The version of `resource.k8s.io` read (the first of v1, v1beta2, v1beta1 the server serves). */
  readonly version: ResourceSliceVersion
  /** A node's GPUs from the current generation of its pool; undefined when it has no slice. */
  readonly devicesOf: (node: string) => DraNodeDevices | undefined
  /** The nodes whose slices list at least one GPU. */
  readonly nodesWithGpus: () => ReadonlyArray<string>
  /** A name of one of the node's slices, for the `source` of what is read from them alone. */
  readonly sliceNameOf: (node: string) => string | undefined
  readonly synced: Effect.Effect<void>
  readonly isSynced: () => boolean
  readonly health: Effect.Effect<Health>
}

/** Which version of `resource.k8s.io` the server serves for ResourceSlices; undefined when none of ours. */
export const servedSliceVersion = (
  api: KubeApi["Service"],
): Effect.Effect<ResourceSliceVersion | undefined, KubeApiError> =>
  api.apiGroupVersions(resourceGroup).pipe(Effect.map(preferredSliceVersion))

/**
 * A few tries for a call made once at start, so a passing API error (timeout, 429, 5xx, lost connection)
 * does not decide the mode; a refusal (403, 404, 400) is not tried again.
 */
export const discoveryRetry = {
  schedule: Schedule.exponential(Duration.millis(500)).pipe(Schedule.upTo({ times: 4 })),
  while: (error: KubeApiError) => error.kind !== "rejected" && error.kind !== "gone",
}

const nodeOf = (slice: ResourceSlice): string => (slice.nodeName !== "" ? slice.nodeName : slice.pool.name)

/**
 * Watches the ResourceSlices of driver `gpu.nvidia.com` (list and watch with resourceVersions, bookmarks,
 * relist on 410, through the same API client, QPS bucket and deadlines as pods and nodes) and calls
 * `identityChanged` for a node whenever what its slices say of its GPUs changes: a device added or removed,
 * another UUID, product, PCI address, driver version or MIG device, a new pool generation, or its last
 * slice deleted (then with `undefined`). A slice update that changes none of that (device order after a
 * plugin restart, taints, capacity) calls nothing.
 */
export const start = Effect.fnUntraced(function* (
  api: KubeApi["Service"],
  version: ResourceSliceVersion,
  options: ResourceInformer.InformerOptions,
  identityChanged: (node: string, devices: DraNodeDevices | undefined) => Effect.Effect<void>,
): Effect.fn.Return<DraSlices, never, Scope.Scope | ServiceMetrics> {
  const slicesByNode = new Map<string, Map<string, ResourceSlice>>()
  const devicesByNode = new Map<string, DraNodeDevices>()
  const keysByNode = new Map<string, string>()

  const recompute = (node: string): Effect.Effect<void> => {
    const slices = slicesByNode.get(node)
    if (slices === undefined || slices.size === 0) {
      slicesByNode.delete(node)
      keysByNode.delete(node)
      return devicesByNode.delete(node) ? identityChanged(node, undefined) : Effect.void
    }
    const devices = draNodeDevicesOf(node, slices.values())
    devicesByNode.set(node, devices)
    const key = identityKeyOf(devices)
    if (keysByNode.get(node) === key) return Effect.void
    keysByNode.set(node, key)
    return identityChanged(node, devices)
  }

  const changed = (change: CacheChange<ResourceSlice>): Effect.Effect<void> => {
    const nodes = new Set<string>()
    if (change._tag === "Updated") {
      const previousNode = nodeOf(change.previous)
      slicesByNode.get(previousNode)?.delete(change.previous.key)
      nodes.add(previousNode)
    }
    const slice = change.object
    const node = nodeOf(slice)
    nodes.add(node)
    if (change._tag === "Deleted") {
      slicesByNode.get(node)?.delete(slice.key)
    } else {
      let slices = slicesByNode.get(node)
      if (slices === undefined) {
        slices = new Map()
        slicesByNode.set(node, slices)
      }
      slices.set(slice.key, slice)
    }
    return Effect.forEach(nodes, recompute, { discard: true })
  }

  const informer = yield* ResourceInformer.start(
    {
      resource: "resourceslices",
      list: (page) => api.listResourceSlices(version, nvidiaGpuDriverSelector, page),
      watch: (resourceVersion, timeoutSeconds) =>
        api.watch({
          path: resourceSlicesPath(version),
          fieldSelector: nvidiaGpuDriverSelector,
          resourceVersion,
          timeoutSeconds,
        }),
      decode: resourceSliceOf,
    },
    options,
    changed,
  )

  return {
    version,
    devicesOf: (node) => devicesByNode.get(node),
    nodesWithGpus: () => [...devicesByNode.values()].filter((devices) => devices.gpus.length > 0).map((d) => d.node),
    sliceNameOf: (node) => slicesByNode.get(node)?.keys().next().value,
    synced: informer.synced,
    isSynced: informer.isSynced,
    health: informer.health,
  }
})
