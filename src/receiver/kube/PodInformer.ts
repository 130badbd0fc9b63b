import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { CacheChange } from "../../kubeclient/cache/InformerCache.ts"
import * as ResourceInformer from "../../kubeclient/cache/ResourceInformer.ts"
import type { KubeApi } from "../../kubeclient/rest/KubeApi.ts"
import type { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import { type DevicePluginPod, devicePluginPodOf } from "./DevicePluginPod.ts"

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
