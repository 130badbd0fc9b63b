import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { CacheChange } from "../../kubeclient/cache/InformerCache.ts"
import * as ResourceInformer from "../../kubeclient/cache/ResourceInformer.ts"
import type { KubeApi } from "../../kubeclient/rest/KubeApi.ts"
import type { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import { type ClusterNode, clusterNodeOf } from "./ClusterNode.ts"

/**
 * The informer of the cluster's nodes: workers find a pod's node (uid, providerID) in its cache, never by
 * asking the API server per pod; the node labeller finds the labels under `labelPrefix` there, when given.
 */
export const start = (
  api: KubeApi["Service"],
  options: ResourceInformer.InformerOptions,
  onChange: (change: CacheChange<ClusterNode>) => Effect.Effect<void>,
  labelPrefix?: string,
): Effect.Effect<ResourceInformer.ResourceInformer<ClusterNode>, never, Scope.Scope | ServiceMetrics> =>
  ResourceInformer.start(
    {
      resource: "nodes",
      list: (page) => api.listNodes(page),
      watch: (resourceVersion, timeoutSeconds) => api.watch({ path: "/api/v1/nodes", resourceVersion, timeoutSeconds }),
      decode: (object) => clusterNodeOf(object, labelPrefix),
    },
    options,
    onChange,
  )
