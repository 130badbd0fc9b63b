import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ServiceMetrics } from "../../telemetry/ServiceMetrics.ts"
import { type DevicePluginPod, devicePluginPodOf } from "./DevicePluginPod.ts"
import type { CacheChange } from "./InformerCache.ts"
import type { KubeApi } from "./KubeApi.ts"
import * as ResourceInformer from "./ResourceInformer.ts"

export interface PodSelection {
  readonly namespace: string
  readonly labelSelector: string
}

/** The informer of the device-plugin pods: one namespace, one label selector. */
export const start = (
  api: KubeApi["Service"],
  selection: PodSelection,
  options: ResourceInformer.InformerOptions,
  onChange: (change: CacheChange<DevicePluginPod>) => Effect.Effect<void>,
): Effect.Effect<ResourceInformer.ResourceInformer<DevicePluginPod>, never, Scope.Scope | ServiceMetrics> =>
  ResourceInformer.start(
    {
      resource: "pods",
      list: (page) => api.listPods(selection.namespace, selection.labelSelector, page),
      watch: (resourceVersion, timeoutSeconds) =>
        api.watch({
          path: `/api/v1/namespaces/${encodeURIComponent(selection.namespace)}/pods`,
          labelSelector: selection.labelSelector,
          resourceVersion,
          timeoutSeconds,
        }),
      decode: devicePluginPodOf,
    },
    options,
    onChange,
  )
