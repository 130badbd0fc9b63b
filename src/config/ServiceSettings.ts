import { isIP } from "node:net"
import { isDnsLabel, validateDnsSubdomain } from "./DnsSubdomain.ts"
import type { SettingRule } from "./ResolveSettings.ts"
import type { AnySetting, Setting } from "./Setting.ts"
import { HOUR, MINUTE, required, SECOND } from "./SettingRules.ts"
import { boolType, durationType, enumType, intType, listType, stringType } from "./SettingType.ts"

/**
 * The service's own settings, keyed from the root of the config file: the cluster, the pipeline's
 * exporters, telemetry, shutdown and leader election. The settings of components live with them.
 */

export const clusterNameSetting: Setting<string> = {
  key: "cluster.name",
  env: "CLUSTER_NAME",
  flag: "--cluster-name",
  type: stringType,
  default: "",
  secret: "none",
  label: "cluster name",
  description: "Name of the cluster, written into every record. Required.",
  check: required("cluster name must be specified"),
  emptyEnvIsValue: true,
}

export const exportersSetting: Setting<ReadonlyArray<string>> = {
  key: "service.pipelines.gpus.exporters",
  env: "EXPORTER_TYPE",
  flag: "--exporter",
  type: listType,
  default: ["stdout"],
  secret: "none",
  label: "exporter type",
  description: "Exporters of the pipeline, by type or component id (comma list).",
  emptyEnvIsValue: true,
}

export const logLevelSetting: Setting<"debug" | "info" | "warn" | "error"> = {
  key: "service.telemetry.logs.level",
  env: "LOG_LEVEL",
  flag: "--log-level",
  type: enumType(["debug", "info", "warn", "error"]),
  default: "info",
  secret: "none",
  label: "log level",
  description: "Least severe log level written to stderr.",
}

export const serverPortSetting: Setting<number> = {
  key: "service.telemetry.metrics.port",
  env: "SERVER_PORT",
  flag: "--server-port",
  type: intType,
  default: 8080,
  secret: "none",
  label: "server port",
  bounds: { min: 1000, max: 65535 },
  description: "Port of /healthz, /readyz and /metrics.",
  check: (value) =>
    value >= 1000 && value <= 65535 ? undefined : "server port must be a valid integer between 1000 and 65535",
  unreadable: "server port must be a valid integer between 1000 and 65535",
}

export const serverAddressSetting: Setting<string> = {
  key: "service.telemetry.metrics.address",
  env: "SERVER_ADDRESS",
  flag: "--server-address",
  type: stringType,
  default: "",
  secret: "none",
  label: "server address",
  description: "IP address /healthz, /readyz and /metrics listen on; empty means every interface.",
  check: (value) =>
    value === "" || isIP(value) !== 0
      ? undefined
      : "server address must be an IP address such as 127.0.0.1 or ::1, or empty for every interface",
  emptyEnvIsValue: true,
}

/** One series per GPU, as dcgm-exporter's own: large fleets that do not join with DCGM may leave it out. */
export const gpuInfoMetricSetting: Setting<boolean> = {
  key: "service.telemetry.metrics.gpuInfo",
  env: "GPU_INFO_METRIC",
  flag: "--gpu-info-metric",
  type: boolType,
  default: true,
  secret: "none",
  label: "GPU info metric",
  description:
    "Whether /metrics and OTLP metric pushes carry gpu_serials_gpu_info, one series per known GPU with DCGM's labels (--no-gpu-info-metric leaves it out).",
}

/** The fleet page and JSON API on the health server (docs/api.md). */
export const fleetPageSetting: Setting<boolean> = {
  key: "service.fleet.page",
  env: "FLEET_PAGE",
  flag: "--fleet-page",
  type: boolType,
  default: true,
  secret: "none",
  label: "fleet page",
  description:
    "Whether the health server serves the fleet page (/, /assets) and its read-only JSON API (/api/v1); --no-fleet-page removes all three.",
}

export const fleetTokenSetting: Setting<string> = {
  key: "service.fleet.token",
  env: "FLEET_TOKEN",
  type: stringType,
  default: "",
  secret: "value",
  label: "fleet token",
  description:
    "When set, every /api call needs it as Authorization: Bearer <token> (the page asks for it); the page's shell and assets, /healthz, /readyz and /metrics stay open. Empty: no token.",
  emptyEnvIsValue: true,
}

export const fleetEventsSetting: Setting<number> = {
  key: "service.fleet.events",
  env: "FLEET_EVENTS",
  flag: "--fleet-events",
  type: intType,
  default: 1000,
  secret: "none",
  label: "fleet events",
  bounds: { min: 0, max: 100_000 },
  description: "How many recent events /api/v1/events keeps (added, moved, removed, health, observed); 0 keeps none.",
}

/** Kubernetes' default `terminationGracePeriodSeconds` is 30s: the default leaves a third of it spare. */
export const shutdownTimeoutSetting: Setting<number> = {
  key: "service.shutdownTimeout",
  env: "SHUTDOWN_TIMEOUT",
  flag: "--shutdown-timeout",
  type: durationType,
  default: 20_000,
  secret: "none",
  label: "shutdown timeout",
  bounds: { min: SECOND, max: 10 * MINUTE },
  description:
    "Deadline from SIGTERM or SIGINT to exit: in-flight reads are abandoned at once, queued node labels are written and exporters flush within the rest.",
}

export const leaderElectionSetting: Setting<boolean> = {
  key: "service.leaderElection.enabled",
  env: "LEADER_ELECTION",
  flag: "--leader-election",
  type: boolType,
  default: false,
  secret: "none",
  label: "leader election",
  description:
    "Leader election through a coordination.k8s.io Lease: only the leader reads, followers wait and stay ready.",
}

export const leaseNameSetting: Setting<string> = {
  key: "service.leaderElection.leaseName",
  env: "LEASE_NAME",
  flag: "--lease-name",
  type: stringType,
  default: "gpuid-leader",
  secret: "none",
  label: "lease name",
  description: "Name of the coordination.k8s.io Lease; one per deployment.",
  check: (value) => {
    const problem = value === "" ? undefined : validateDnsSubdomain(value)
    return problem === undefined ? undefined : `lease name ${problem}`
  },
  emptyEnvIsValue: true,
}

export const leaseNamespaceSetting: Setting<string> = {
  key: "service.leaderElection.leaseNamespace",
  env: "LEASE_NAMESPACE",
  flag: "--lease-namespace",
  type: stringType,
  default: "gpuid",
  secret: "none",
  label: "lease namespace",
  description: "Namespace of the Lease: the namespace the service runs in.",
  check: (value) =>
    value === "" || isDnsLabel(value)
      ? undefined
      : "lease namespace must be a namespace name: at most 63 lowercase letters, digits and '-'",
  emptyEnvIsValue: true,
}

export const leaseDurationSetting: Setting<number> = {
  key: "service.leaderElection.leaseDuration",
  env: "LEASE_DURATION",
  flag: "--lease-duration",
  type: durationType,
  default: 15_000,
  secret: "none",
  label: "lease duration",
  bounds: { min: SECOND, max: HOUR },
  description: "How long a lease holds without renewal before another replica may take it.",
}

export const leaseRenewDeadlineSetting: Setting<number> = {
  key: "service.leaderElection.renewDeadline",
  env: "LEASE_RENEW_DEADLINE",
  flag: "--lease-renew-deadline",
  type: durationType,
  default: 10_000,
  secret: "none",
  label: "lease renew deadline",
  bounds: { min: 1, max: HOUR },
  description: "How long the leader keeps trying to renew before it stops work.",
}

export const leaseRetryPeriodSetting: Setting<number> = {
  key: "service.leaderElection.retryPeriod",
  env: "LEASE_RETRY_PERIOD",
  flag: "--lease-retry-period",
  type: durationType,
  default: 2_000,
  secret: "none",
  label: "lease retry period",
  bounds: { min: 1, max: HOUR },
  description: "Time between attempts to acquire or renew the lease.",
}

export const leaderIdentitySetting: Setting<string> = {
  key: "service.leaderElection.identity",
  env: "POD_NAME",
  flag: "--pod-name",
  type: stringType,
  default: "",
  secret: "none",
  label: "pod name",
  description: "Identity written into the lease: the pod name, from the downward API; empty: the hostname.",
  emptyEnvIsValue: true,
}

const leaderElectionRule: SettingRule = (values) => {
  if (values.get(leaderElectionSetting) !== true) return []
  const problems: Array<{ setting: AnySetting; message: string }> = []
  if (values.get(leaseNameSetting)?.trim() === "") {
    problems.push({
      setting: leaseNameSetting,
      message: "lease name must be specified when leader election is enabled",
    })
  }
  if (values.get(leaseNamespaceSetting)?.trim() === "") {
    problems.push({
      setting: leaseNamespaceSetting,
      message: "lease namespace must be specified when leader election is enabled",
    })
  }
  const lease = values.get(leaseDurationSetting)
  const renew = values.get(leaseRenewDeadlineSetting)
  const retry = values.get(leaseRetryPeriodSetting)
  if (
    lease !== undefined &&
    renew !== undefined &&
    retry !== undefined &&
    !(lease > renew && renew > retry && retry > 0)
  ) {
    problems.push({
      setting: leaseDurationSetting,
      message: "lease duration > renew deadline > retry period must hold",
    })
  }
  return problems
}

/** The service's own settings, in the order of the configuration reference. */
export const serviceSettings: ReadonlyArray<AnySetting> = [
  clusterNameSetting,
  exportersSetting,
  logLevelSetting,
  serverPortSetting,
  serverAddressSetting,
  gpuInfoMetricSetting,
  fleetPageSetting,
  fleetTokenSetting,
  fleetEventsSetting,
  shutdownTimeoutSetting,
  leaderElectionSetting,
  leaseNameSetting,
  leaseNamespaceSetting,
  leaseDurationSetting,
  leaseRenewDeadlineSetting,
  leaseRetryPeriodSetting,
  leaderIdentitySetting,
]

/** Rules across the service's own settings. */
export const serviceRules: ReadonlyArray<SettingRule> = [leaderElectionRule]
