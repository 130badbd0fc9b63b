import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { ComponentStartError } from "../../component/ComponentStartError.ts"
import { defaultExecHandshakeTimeoutMs, defaultRequestTimeoutMs, KubeApi } from "../../kubeclient/rest/KubeApi.ts"
import type { KubeExecConfig } from "./KubeExecConfig.ts"

/**
 * The Kubernetes API as a `kube_exec` config names it (kubeconfig, QPS, burst), for the component `id`:
 * a kubeconfig that cannot be loaded is that component's start error.
 */
export const receiverKubeApi = (
  config: KubeExecConfig,
  id: string,
): Effect.Effect<KubeApi["Service"], ComponentStartError, Scope.Scope> =>
  Layer.build(
    KubeApi.layer({
      kubeconfig: config.kubeconfig,
      qps: config.qps,
      burst: config.burst,
      requestTimeoutMs: defaultRequestTimeoutMs,
      execHandshakeTimeoutMs: defaultExecHandshakeTimeoutMs,
    }),
  ).pipe(
    Effect.map((context) => Context.get(context, KubeApi)),
    Effect.mapError((error) => new ComponentStartError({ component: id, message: error.message })),
  )
