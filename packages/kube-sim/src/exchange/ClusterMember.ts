import type { Fleet } from "../catalog/Fleet.ts"
import type { Churn } from "../cluster/Churn.ts"
import type { DevicePluginDaemonSet } from "../cluster/DevicePluginDaemonSet.ts"
import type { ClusterLedger } from "../ledger/ClusterLedger.ts"
import type { ExchangeMember } from "./ExchangeMember.ts"

export interface ClusterParts {
  readonly cluster: string
  readonly fleet: Fleet
  readonly ledger: ClusterLedger
  readonly churn: Churn
  readonly daemonSet: DevicePluginDaemonSet
}

/** A simulated cluster's part in a board exchange, made of its fleet, ledger, churn rates and DaemonSet. */
export const clusterMember = (parts: ClusterParts): ExchangeMember => ({
  cluster: parts.cluster,
  fleet: parts.fleet,
  swapsPerMinute: () => parts.churn.currentRates.crossClusterSwapsPerMinute ?? 0,
  recordDeparture: (host, identity, swap, to, time) => parts.ledger.gpuDeparted(host, identity, swap, to, time),
  recordArrival: (host, identity, swap, from, time) => parts.ledger.gpuArrived(host, identity, swap, from, time),
  boardsChanged: (host) => {
    const node = host.machine.nodeName
    // A pod on its way out is replaced by one that reads (and, with DRA, publishes) the boards as they are now.
    if (parts.daemonSet.podOf(node) !== undefined) parts.daemonSet.restart(node)
  },
})
