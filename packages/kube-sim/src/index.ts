/** The simulated Kubernetes cluster of GPU nodes: what tests, benchmarks and `gpu-serials demo` start. */
export type { AccessDenial } from "./api/AccessRules.ts"
export type { ModelMix } from "./catalog/Fleet.ts"
export type { FleetModelName } from "./catalog/GpuModel.ts"
export { fleetModelNames } from "./catalog/GpuModel.ts"
export type { DriverFailure } from "./catalog/SimulatedHost.ts"
export type { ChurnRates } from "./cluster/Churn.ts"
export type { PodTimings } from "./cluster/DevicePluginDaemonSet.ts"
export type { ExecLatency } from "./exec/ExecLatency.ts"
export type { ExecSession } from "./exec/ExecLog.ts"
export type { FaultRates, ScriptedFault } from "./faults/FaultPlan.ts"
export type {
  AccessControl,
  ChurnControl,
  FaultControl,
  SimulatedClient,
  SimulatedCluster,
  SimulatedClusterStats,
  SimulatedGpuView,
  SimulatedNodeView,
} from "./SimulatedCluster.ts"
export { startSimulatedCluster } from "./SimulatedCluster.ts"
export type { SimulatedClusterOptions } from "./SimulatedClusterOptions.ts"
