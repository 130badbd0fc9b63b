import * as Effect from "effect/Effect"
import type { ComponentFactory } from "../../component/Component.ts"
import { ComponentStartError } from "../../component/ComponentStartError.ts"
import { type Configured, configuredBy } from "../../config/ComponentSettings.ts"
import { loadClusterAccess } from "../../kubeclient/clientcmd/KubeconfigLoader.ts"
import * as LeaderElector from "../../kubeclient/leaderelection/LeaderElector.ts"
import * as LeaseLock from "../../kubeclient/leaderelection/LeaseLock.ts"
import { KubeApi } from "../../kubeclient/rest/KubeApi.ts"
import type { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import type { InventoryFeed } from "../../pipeline/InventoryFeed.ts"
import type { ElectorFactory } from "../../pipeline/Leadership.ts"
import { type KubeExecConfig, kubeExecSettings } from "./KubeExecConfig.ts"
import { defaultTuning, type KubeExecReceiver, type KubeExecTuning, make } from "./KubeExecReceiver.ts"
import { receiverKubeApi } from "./ReceiverKubeApi.ts"

export type KubeExecFactory = ComponentFactory<
  "receiver",
  KubeExecConfig,
  KubeExecReceiver,
  ServiceMetrics | InventoryFeed
> &
  Configured<KubeExecConfig> & {
    /** Leader election through a Lease in the cluster this receiver reads, with a Kubernetes client of its own. */
    readonly elector: ElectorFactory<KubeExecConfig>
  }

/** The elector of the replicas reading one cluster: the Lease lives there, read through the receiver's kubeconfig. */
const elector: ElectorFactory<KubeExecConfig> = (config, lease, settings) =>
  Effect.gen(function* () {
    const { access, origin } = yield* loadClusterAccess(config.kubeconfig).pipe(
      Effect.mapError((error) => new ComponentStartError({ component: settings.id, message: error.message })),
    )
    yield* Effect.logInfo("leader election starting").pipe(
      Effect.annotateLogs({
        lease: `${lease.leaseNamespace}/${lease.leaseName}`,
        identity: lease.identity,
        kubeconfig: origin,
      }),
    )
    return yield* LeaderElector.make(LeaseLock.make(access, lease.leaseNamespace, lease.leaseName), lease)
  })

/** The `kube_exec` receiver factory; its settings are those of `KubeExecConfig.ts`. */
export const makeFactory = (tuning: KubeExecTuning = defaultTuning): KubeExecFactory => ({
  kind: "receiver",
  type: "kube_exec",
  ...configuredBy(kubeExecSettings),
  elector,
  create: (config, settings) =>
    Effect.gen(function* () {
      const api = yield* receiverKubeApi(config, settings.id)
      yield* Effect.logInfo("kube_exec receiver starting").pipe(
        Effect.annotateLogs({
          receiver: settings.id,
          kubeconfig: api.origin,
          discovery: config.discovery,
          namespace: config.namespace,
          labelSelector: config.labelSelector,
          workers: config.workers,
          nodeLabels: config.nodeLabels.enabled ? config.nodeLabels.prefix : "off",
        }),
      )
      return yield* make(config, tuning).pipe(Effect.provideService(KubeApi, api))
    }),
})

export const factory: KubeExecFactory = makeFactory()
