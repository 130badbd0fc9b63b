/** The simulated Kubernetes cluster of GPU nodes: what tests, benchmarks and `gpu-serials demo` start. */
export type { ApiRequestInit, ApiResponse, ApiServerAddress } from "./ApiRequest.ts"
export { requestApi } from "./ApiRequest.ts"
export type { AccessDenial } from "./api/AccessRules.ts"
export type { ResourceApiVersion } from "./api/ResourceKind.ts"
export type { ModelMix } from "./catalog/Fleet.ts"
export type { FleetModelName } from "./catalog/GpuModel.ts"
export { fleetModelNames } from "./catalog/GpuModel.ts"
export type { DriverFailure } from "./catalog/SimulatedHost.ts"
export type { ChurnRates } from "./cluster/Churn.ts"
export type { PodTimings } from "./cluster/DevicePluginDaemonSet.ts"
export { draDriverChart } from "./cluster/DraKubeletPluginPod.ts"
export { draDriverRoot } from "./cluster/DraPluginCommand.ts"
export { nvidiaDraDriver } from "./cluster/DraResourceSlice.ts"
export type { BoardExchangeOptions, NodeOfCluster } from "./exchange/BoardExchange.ts"
export { BoardExchange } from "./exchange/BoardExchange.ts"
export type { BoardCrossing, CrossClusterSwap } from "./exchange/CrossClusterSwap.ts"
export type { ExecLatency } from "./exec/ExecLatency.ts"
export type { ExecSession } from "./exec/ExecLog.ts"
export type { FaultRates, ScriptedFault } from "./faults/FaultPlan.ts"
export type { BoardPlace } from "./ledger/BoardPlace.ts"
export type {
  ClusterStay,
  CrossClusterMove,
  FleetGpuHistory,
  FleetWhereabouts,
  NamedLedger,
  UnmatchedCrossing,
} from "./ledger/CrossClusterTruth.ts"
export { CrossClusterTruth } from "./ledger/CrossClusterTruth.ts"
export type { GpuHistory, GpuStay, GpuWhereabouts, HealthStay } from "./ledger/FleetTruth.ts"
export { FleetTruth } from "./ledger/FleetTruth.ts"
export type { LedgerEntry, LedgerEntryKind, PlacementCause } from "./ledger/LedgerEntry.ts"
export { ledgerLine, parseLedger } from "./ledger/LedgerJsonl.ts"
export type { TrueHealthState } from "./ledger/TrueHealth.ts"
export type {
  AccessControl,
  ChurnControl,
  FaultControl,
  GroundTruth,
  SimulatedClient,
  SimulatedCluster,
  SimulatedClusterStats,
  SimulatedGpuView,
  SimulatedNodeView,
} from "./SimulatedCluster.ts"
export { startSimulatedCluster } from "./SimulatedCluster.ts"
export type { SimulatedClusterOptions } from "./SimulatedClusterOptions.ts"
