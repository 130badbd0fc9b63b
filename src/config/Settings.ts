import { isIP } from "node:net"
import { Result } from "effect"
import { validateDnsSubdomain } from "./DnsSubdomain.ts"
import { exporterQueueRule, exporterQueueSettingList, exporterQueueSettings } from "./ExporterQueueSettings.ts"
import { formatGoDuration } from "./GoDuration.ts"
import { parseLabelSelector } from "./LabelSelector.ts"
import { natsServerList } from "./NatsServerList.ts"
import type { SettingRule } from "./ResolveSettings.ts"
import type { AnySetting, Setting } from "./Setting.ts"
import {
  boolType,
  byteSizeType,
  durationType,
  enumType,
  floatType,
  intType,
  listType,
  millisType,
  pairsType,
  stringType,
} from "./SettingType.ts"

/**
 * The settings table: every setting of the service with its config-file key, environment variable, flag,
 * type, default, rule and message. Resolution, flags, printing, redaction and the configuration reference
 * are all driven by it. The Go original's variables keep their names, defaults and messages.
 */

const required =
  (message: string) =>
  (value: string): string | undefined =>
    value.trim() === "" ? message : undefined

const positive =
  (message: string) =>
  (value: number): string | undefined =>
    value > 0 ? undefined : message

const notNegative =
  (message: string) =>
  (value: number): string | undefined =>
    value >= 0 ? undefined : message

const isUrlWithScheme = (text: string, schemes: ReadonlyArray<string>): boolean => {
  if (!URL.canParse(text)) return false
  const url = new URL(text)
  return schemes.includes(url.protocol) && url.hostname !== ""
}

const optionalHttpUrl =
  (message: string) =>
  (value: string): string | undefined =>
    value === "" || isUrlWithScheme(value, ["http:", "https:"]) ? undefined : message

// Durations in milliseconds, for the settings' bounds: every delay of this process stays far below
// MAX_TIMER_MILLIS (SettingBounds.ts), the longest a timer holds.
const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 3_600_000
const DAY = 24 * HOUR
const WEEK = 7 * DAY
// Stream retention is kept by the NATS server, not by a timer of this process.
const YEAR = 365 * DAY

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

// ---- the cluster and the kube_exec receiver -------------------------------------------------------------

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

export const namespaceSetting: Setting<string> = {
  key: "receivers.kube_exec.namespace",
  env: "NAMESPACE",
  flag: "--namespace",
  type: stringType,
  default: "gpu-operator",
  secret: "none",
  label: "namespace",
  description: "Namespace of the NVIDIA device-plugin pods.",
  check: required("namespace must be specified"),
  emptyEnvIsValue: true,
}

export const labelSelectorSetting: Setting<string> = {
  key: "receivers.kube_exec.labelSelector",
  env: "LABEL_SELECTOR",
  flag: "--label-selector",
  type: stringType,
  default: "app=nvidia-device-plugin-daemonset",
  secret: "none",
  label: "label selector",
  description: "Kubernetes label selector of the device-plugin pods.",
  check: (value) => {
    if (value.trim() === "") return "label selector must be specified"
    const parsed = parseLabelSelector(value)
    return Result.isFailure(parsed) ? `invalid label selector ${JSON.stringify(value)}: ${parsed.failure}` : undefined
  },
  emptyEnvIsValue: true,
}

export const containerSetting: Setting<string> = {
  key: "receivers.kube_exec.container",
  env: "CONTAINER",
  flag: "--container",
  type: stringType,
  default: "nvidia-device-plugin",
  secret: "none",
  label: "container",
  description: "Container of the device-plugin pod that nvidia-smi runs in.",
  check: required("container must be specified"),
  emptyEnvIsValue: true,
}

export const workersSetting: Setting<number> = {
  key: "receivers.kube_exec.workers",
  env: "WORKERS",
  flag: "--workers",
  type: intType,
  default: 16,
  secret: "none",
  label: "workers",
  // Each worker holds an exec and its output; QPS caps the pace long before a thousand of them.
  bounds: { min: 1, max: 1024 },
  description: "Pods read at the same time.",
  check: positive("workers must be > 0"),
}

export const timeoutSetting: Setting<number> = {
  key: "receivers.kube_exec.timeout",
  env: "TIMEOUT",
  flag: "--timeout",
  type: durationType,
  default: 30_000,
  secret: "none",
  label: "timeout",
  bounds: { min: 1, max: HOUR },
  description: "Deadline per pod, covering exec, node lookup and hand-off to the exporters.",
  check: positive("timeout must be > 0"),
}

export const resyncSetting: Setting<number> = {
  key: "receivers.kube_exec.resync",
  env: "RESYNC",
  flag: "--resync",
  type: durationType,
  default: 0,
  secret: "none",
  label: "resync period",
  bounds: { min: SECOND, max: DAY, zeroDisables: true },
  description: "Informer resync period; 0 disables periodic resync.",
  check: notNegative("resync period must be >= 0 (0 disables periodic resync)"),
}

export const qpsSetting: Setting<number> = {
  key: "receivers.kube_exec.qps",
  env: "QPS",
  flag: "--qps",
  type: floatType,
  default: 50,
  secret: "none",
  label: "qps",
  bounds: { min: 0.01, max: 10_000 },
  description: "Kubernetes API requests per second, shared by every call.",
  check: positive("qps must be > 0"),
}

export const burstSetting: Setting<number> = {
  key: "receivers.kube_exec.burst",
  env: "BURST",
  flag: "--burst",
  type: intType,
  default: 100,
  secret: "none",
  label: "burst",
  bounds: { min: 1, max: 10_000 },
  description: "Kubernetes API request burst above the QPS rate.",
  check: positive("burst must be > 0"),
}

export const kubeconfigSetting: Setting<string> = {
  key: "receivers.kube_exec.kubeconfig",
  env: "KUBECONFIG",
  flag: "--kubeconfig",
  type: stringType,
  default: "",
  secret: "none",
  label: "kubeconfig",
  description: "Path of a kubeconfig file; empty means in-cluster, then the default kubeconfig.",
  emptyEnvIsValue: true,
}

export const nvidiaSmiModeSetting: Setting<"auto" | "xml" | "csv"> = {
  key: "receivers.kube_exec.nvidiaSmi.mode",
  env: "NVIDIA_SMI_MODE",
  flag: "--nvidia-smi-mode",
  type: enumType(["auto", "xml", "csv"]),
  default: "auto",
  secret: "none",
  label: "nvidia-smi mode",
  description: "How nvidia-smi is read: csv (cheap query), xml (-q -x) or auto (csv, xml where csv lacks fields).",
}

export const nvidiaSmiMaxOutputSetting: Setting<number> = {
  key: "receivers.kube_exec.nvidiaSmi.maxOutput",
  env: "NVIDIA_SMI_MAX_OUTPUT",
  flag: "--nvidia-smi-max-output",
  type: byteSizeType,
  default: 8 * 1024 * 1024,
  secret: "none",
  label: "nvidia-smi output cap",
  bounds: { min: 1024, max: 64 * 1024 * 1024 },
  description: "Most nvidia-smi output read from one exec (bytes, or 512Ki, 8Mi); more is an error.",
}

export const nodeLabelsEnabledSetting: Setting<boolean> = {
  key: "receivers.kube_exec.nodeLabels.enabled",
  env: "LABELS_ENABLED",
  flag: "--labels",
  type: boolType,
  default: true,
  secret: "none",
  label: "node labels",
  description: "Whether GPU serials are written as node labels (--no-labels turns it off).",
}

export const nodeLabelPrefixSetting: Setting<string> = {
  key: "receivers.kube_exec.nodeLabels.prefix",
  env: "LABEL_PREFIX",
  flag: "--label-prefix",
  type: stringType,
  default: "gpu-serials.dev",
  secret: "none",
  label: "label prefix",
  description: "Prefix of the node label keys (<prefix>/gpu-0); a DNS subdomain.",
  check: (value) => {
    const problem = validateDnsSubdomain(value)
    if (problem !== undefined) return `label prefix ${problem}`
    if (/(^|\.)(kubernetes\.io|k8s\.io)$/.test(value)) {
      return "label prefix must not be under kubernetes.io or k8s.io (reserved for Kubernetes)"
    }
    return undefined
  },
}

// ---- the inventory processor ------------------------------------------------------------------------

export const reportIntervalSetting: Setting<number> = {
  key: "processors.inventory.reportInterval",
  env: "REPORT_INTERVAL",
  flag: "--report-interval",
  type: durationType,
  default: 3_600_000,
  secret: "none",
  label: "report interval",
  bounds: { min: SECOND, max: WEEK, zeroDisables: true },
  description: "How often an unchanged GPU is re-affirmed with an observed event; 0 disables it.",
  check: notNegative("report interval must be >= 0 (0 disables periodic reports)"),
}

export const removalGraceSetting: Setting<number> = {
  key: "processors.inventory.removalGrace",
  env: "REMOVAL_GRACE",
  flag: "--removal-grace",
  type: durationType,
  default: 300_000,
  secret: "none",
  label: "removal grace",
  bounds: { min: 0, max: WEEK },
  description:
    "How long a node, pod or GPU may be gone before its GPUs are removed; a restarted device-plugin pod within it changes nothing.",
  check: notNegative("removal grace must be >= 0"),
}

// ---- the service: telemetry and leader election --------------------------------------------------------

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
    "Deadline from SIGTERM or SIGINT to exit: in-flight reads are abandoned at once, exporters flush within the rest.",
}

export const leaderElectionSetting: Setting<boolean> = {
  key: "service.leaderElection.enabled",
  env: "LEADER_ELECTION",
  flag: "--leader-election",
  type: boolType,
  default: false,
  secret: "none",
  label: "leader election",
  description: "Leader election through a Lease; not available in this version, so true is refused: run one replica.",
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
    value === "" || (value.length <= 63 && DNS_LABEL.test(value))
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
  description: "Identity written into the lease: the pod name, from the downward API.",
  emptyEnvIsValue: true,
}

// ---- exporter http ------------------------------------------------------------------------------------

export const httpEndpointSetting: Setting<string> = {
  key: "endpoint",
  exporter: "http",
  env: "HTTP_ENDPOINT",
  flag: "--http-endpoint",
  type: stringType,
  default: "",
  secret: "userinfo",
  label: "HTTP endpoint",
  description: "URL the JSON array of records is POSTed to. Required for the http exporter.",
  check: (value) =>
    value.trim() === ""
      ? "HTTP endpoint URL is required"
      : isUrlWithScheme(value, ["http:", "https:"])
        ? undefined
        : "HTTP endpoint must be a valid HTTP/HTTPS URL",
}

export const httpTimeoutSetting: Setting<number> = {
  key: "timeout",
  exporter: "http",
  env: "HTTP_TIMEOUT",
  flag: "--http-timeout",
  type: durationType,
  default: 30_000,
  secret: "none",
  label: "HTTP timeout",
  bounds: { min: 1, max: HOUR },
  description: "Deadline of one POST.",
  check: (value) => (value > 0 ? undefined : `timeout must be positive, got ${formatGoDuration(value)}`),
}

export const httpAuthTokenSetting: Setting<string> = {
  key: "authToken",
  exporter: "http",
  env: "HTTP_AUTH_TOKEN",
  type: stringType,
  secret: "value",
  label: "HTTP auth token",
  description: "Bearer token sent with every POST.",
}

// ---- exporter postgres --------------------------------------------------------------------------------

export const postgresUrlSetting: Setting<string> = {
  key: "url",
  exporter: "postgres",
  env: "POSTGRES_URL",
  type: stringType,
  secret: "userinfo",
  label: "postgres URL",
  description: "Connection URL (postgres://user:password@host:port/db); replaces host, port, database, user, password.",
  check: (value) =>
    isUrlWithScheme(value, ["postgres:", "postgresql:"])
      ? undefined
      : "postgres URL must be a postgres:// or postgresql:// URL",
}

export const postgresHostSetting: Setting<string> = {
  key: "host",
  exporter: "postgres",
  env: "POSTGRES_HOST",
  flag: "--postgres-host",
  type: stringType,
  default: "",
  secret: "none",
  label: "postgres host",
  description: "PostgreSQL server host.",
}

export const postgresPortSetting: Setting<number> = {
  key: "port",
  exporter: "postgres",
  env: "POSTGRES_PORT",
  flag: "--postgres-port",
  type: intType,
  default: 5432,
  secret: "none",
  label: "postgres port",
  bounds: { min: 1, max: 65535 },
  description: "PostgreSQL server port.",
  check: (value) =>
    value > 0 && value <= 65535 ? undefined : `postgres port must be between 1 and 65535, got ${value}`,
}

export const postgresDatabaseSetting: Setting<string> = {
  key: "database",
  exporter: "postgres",
  env: "POSTGRES_DB",
  flag: "--postgres-db",
  type: stringType,
  default: "",
  secret: "none",
  label: "postgres database",
  description: "Database name.",
}

export const postgresUserSetting: Setting<string> = {
  key: "user",
  exporter: "postgres",
  env: "POSTGRES_USER",
  flag: "--postgres-user",
  type: stringType,
  default: "",
  secret: "none",
  label: "postgres user",
  description: "Database user.",
}

export const postgresPasswordSetting: Setting<string> = {
  key: "password",
  exporter: "postgres",
  env: "POSTGRES_PASSWORD",
  type: stringType,
  default: "",
  secret: "value",
  label: "postgres password",
  description: "Database password.",
}

export const postgresSslModeSetting: Setting<"disable" | "allow" | "prefer" | "require" | "verify-ca" | "verify-full"> =
  {
    key: "sslmode",
    exporter: "postgres",
    env: "POSTGRES_SSLMODE",
    flag: "--postgres-sslmode",
    type: enumType(["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]),
    default: "require",
    secret: "none",
    label: "postgres sslmode",
    description: "TLS mode of the connection, as libpq names them.",
  }

const SQL_TABLE = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/

export const postgresTableSetting: Setting<string> = {
  key: "table",
  exporter: "postgres",
  env: "POSTGRES_TABLE",
  flag: "--postgres-table",
  type: stringType,
  default: "gpu",
  secret: "none",
  label: "postgres table",
  description: "Table of readings (optionally schema.table).",
  check: (value) =>
    value === ""
      ? "postgres table name cannot be empty"
      : SQL_TABLE.test(value)
        ? undefined
        : "postgres table name must be an identifier of letters, digits and '_' (optionally schema.table)",
}

export const postgresAutoMigrateSetting: Setting<boolean> = {
  key: "autoMigrate",
  exporter: "postgres",
  env: "POSTGRES_AUTO_MIGRATE",
  flag: "--postgres-auto-migrate",
  type: boolType,
  default: false,
  secret: "none",
  label: "postgres auto-migrate",
  description: "Whether the exporter creates its tables and indexes at start.",
}

// ---- exporter nats ------------------------------------------------------------------------------------

const NATS_SCHEMES = ["nats:", "tls:", "ws:", "wss:"]

export const natsUrlSetting: Setting<string> = {
  key: "url",
  exporter: "nats",
  env: "NATS_URL",
  flag: "--nats-url",
  type: stringType,
  default: "nats://127.0.0.1:4222",
  secret: "userinfo",
  label: "NATS URL",
  description: "NATS servers (comma list of nats://, tls://, ws:// or wss:// URLs, or host:port).",
  check: (value) => {
    const servers = value.split(",").map((server) => server.trim())
    const valid = servers.every((server) =>
      server.includes("://")
        ? isUrlWithScheme(server, NATS_SCHEMES)
        : isUrlWithScheme(`nats://${server}`, NATS_SCHEMES),
    )
    return value.trim() !== "" && valid ? undefined : "NATS URL must be a comma list of nats://host:port servers"
  },
}

const SUBJECT_TOKEN = /^[^\s.*>]+$/

export const natsSubjectPrefixSetting: Setting<string> = {
  key: "subjectPrefix",
  exporter: "nats",
  env: "NATS_SUBJECT_PREFIX",
  flag: "--nats-subject-prefix",
  type: stringType,
  default: "gpu.serials",
  secret: "none",
  label: "NATS subject prefix",
  description: "Subjects are <prefix>.<cluster>.<node>.<event>.",
  check: (value) =>
    value.split(".").every((token) => SUBJECT_TOKEN.test(token))
      ? undefined
      : "NATS subject prefix must be dot-separated tokens without spaces, '*' or '>'",
}

const STREAM_NAME = /^[^\s.*>/\\]+$/

export const natsStreamSetting: Setting<string> = {
  key: "stream",
  exporter: "nats",
  env: "NATS_STREAM",
  flag: "--nats-stream",
  type: stringType,
  secret: "none",
  label: "NATS stream",
  description: "JetStream stream to publish to with acks and de-duplication; unset publishes on core NATS.",
  check: (value) =>
    STREAM_NAME.test(value) ? undefined : "NATS stream name must not contain spaces, '.', '*', '>', '/' or '\\'",
}

export const natsStreamCreateSetting: Setting<boolean> = {
  key: "streamCreate",
  exporter: "nats",
  env: "NATS_STREAM_CREATE",
  flag: "--nats-stream-create",
  type: boolType,
  default: true,
  secret: "none",
  label: "NATS stream create",
  description:
    "Whether the exporter creates the stream when missing and updates its subjects, duplicate window, max age and max bytes; false: the stream must exist.",
}

export const natsStreamDuplicateWindowSetting: Setting<number> = {
  key: "duplicateWindow",
  exporter: "nats",
  env: "NATS_STREAM_DUPLICATE_WINDOW",
  type: durationType,
  default: 120_000,
  secret: "none",
  label: "NATS stream duplicate window",
  bounds: { min: 1, max: DAY },
  description: "Window in which the stream drops a second message with the same record id.",
  check: positive("NATS stream duplicate window must be > 0"),
}

export const natsStreamRetentionSetting: Setting<"limits" | "interest" | "workqueue"> = {
  key: "retention",
  exporter: "nats",
  env: "NATS_STREAM_RETENTION",
  type: enumType(["limits", "interest", "workqueue"]),
  default: "limits",
  secret: "none",
  label: "NATS stream retention",
  description: "Retention policy of a stream the exporter creates; an existing stream keeps its own.",
}

export const natsStreamMaxAgeSetting: Setting<number> = {
  key: "maxAge",
  exporter: "nats",
  env: "NATS_STREAM_MAX_AGE",
  type: durationType,
  default: 7 * 24 * 3_600_000,
  secret: "none",
  label: "NATS stream max age",
  bounds: { min: SECOND, max: YEAR, zeroDisables: true },
  description: "How long the stream keeps a message (default 7 days); 0 keeps it forever.",
  check: notNegative("NATS stream max age must be >= 0 (0 keeps messages forever)"),
}

export const natsStreamMaxBytesSetting: Setting<number> = {
  key: "maxBytes",
  exporter: "nats",
  env: "NATS_STREAM_MAX_BYTES",
  type: byteSizeType,
  default: 1024 * 1024 * 1024,
  secret: "none",
  label: "NATS stream max bytes",
  bounds: { min: 1024 * 1024, max: 1024 ** 5, zeroDisables: true },
  description:
    "Most bytes the stream keeps (bytes, or 512Mi, 1Gi), the oldest messages discarded beyond; 0: no size limit.",
  check: notNegative("NATS stream max bytes must be >= 0 (0: no size limit)"),
}

export const natsQueueSettings = exporterQueueSettings("nats")

export const natsKvBucketSetting: Setting<string> = {
  key: "kvBucket",
  exporter: "nats",
  env: "NATS_KV_BUCKET",
  flag: "--nats-kv-bucket",
  type: stringType,
  default: "gpu_serials",
  secret: "none",
  label: "NATS KV bucket",
  description: "Key-value bucket of the current location of every GPU, by uuid and by serial.",
  check: (value) =>
    /^[A-Za-z0-9_-]+$/.test(value) ? undefined : "NATS KV bucket name must be letters, digits, '_' or '-'",
}

export const natsCredsSetting: Setting<string> = {
  key: "creds",
  exporter: "nats",
  env: "NATS_CREDS",
  flag: "--nats-creds",
  type: stringType,
  secret: "none",
  label: "NATS credentials file",
  description: "Path of a NATS .creds file (JWT and nkey seed).",
  check: required("NATS credentials file path must not be empty"),
}

export const natsTokenSetting: Setting<string> = {
  key: "token",
  exporter: "nats",
  env: "NATS_TOKEN",
  type: stringType,
  secret: "value",
  label: "NATS token",
  description: "Token authentication.",
}

export const natsUserSetting: Setting<string> = {
  key: "user",
  exporter: "nats",
  env: "NATS_USER",
  flag: "--nats-user",
  type: stringType,
  secret: "none",
  label: "NATS user",
  description: "User of user/password authentication.",
}

export const natsPasswordSetting: Setting<string> = {
  key: "password",
  exporter: "nats",
  env: "NATS_PASSWORD",
  type: stringType,
  secret: "value",
  label: "NATS password",
  description: "Password of user/password authentication.",
}

export const natsNkeySeedSetting: Setting<string> = {
  key: "nkeySeed",
  exporter: "nats",
  env: "NATS_NKEY_SEED",
  type: stringType,
  secret: "value",
  label: "NATS nkey seed",
  description: "User nkey seed (SU...) for nkey authentication.",
  check: (value) => (value.startsWith("SU") ? undefined : "NATS nkey seed must be a user seed (starting with SU)"),
}

export const natsTlsCaSetting: Setting<string> = {
  key: "tls.ca",
  exporter: "nats",
  env: "NATS_TLS_CA",
  flag: "--nats-tls-ca",
  type: stringType,
  secret: "none",
  label: "NATS TLS CA",
  description: "Path of the CA certificate that signs the servers' certificates.",
}

export const natsTlsCertSetting: Setting<string> = {
  key: "tls.cert",
  exporter: "nats",
  env: "NATS_TLS_CERT",
  flag: "--nats-tls-cert",
  type: stringType,
  secret: "none",
  label: "NATS TLS certificate",
  description: "Path of the client certificate.",
}

export const natsTlsKeySetting: Setting<string> = {
  key: "tls.key",
  exporter: "nats",
  env: "NATS_TLS_KEY",
  flag: "--nats-tls-key",
  type: stringType,
  secret: "none",
  label: "NATS TLS key",
  description: "Path of the client certificate's private key.",
}

// ---- exporter otlp ------------------------------------------------------------------------------------

export const otlpQueueSettings = exporterQueueSettings("otlp")

export const otlpEndpointSetting: Setting<string> = {
  key: "endpoint",
  exporter: "otlp",
  env: "OTEL_EXPORTER_OTLP_ENDPOINT",
  flag: "--otlp-endpoint",
  type: stringType,
  default: "http://localhost:4318",
  secret: "userinfo",
  label: "OTLP endpoint",
  description: "Base URL of the OTLP/HTTP receiver (logs go to /v1/logs, metrics to /v1/metrics).",
  check: (value) =>
    isUrlWithScheme(value, ["http:", "https:"]) ? undefined : "OTLP endpoint must be an http:// or https:// URL",
}

export const otlpLogsEndpointSetting: Setting<string> = {
  key: "logsEndpoint",
  exporter: "otlp",
  env: "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
  flag: "--otlp-logs-endpoint",
  type: stringType,
  secret: "userinfo",
  label: "OTLP logs endpoint",
  description: "Full URL for logs, used as is; unset means <endpoint>/v1/logs.",
  check: optionalHttpUrl("OTLP logs endpoint must be an http:// or https:// URL"),
}

export const otlpHeadersSetting: Setting<Readonly<Record<string, string>>> = {
  key: "headers",
  exporter: "otlp",
  env: "OTEL_EXPORTER_OTLP_HEADERS",
  type: pairsType,
  default: {},
  secret: "value",
  label: "OTLP headers",
  description: "Headers sent with every export (k=v,k2=v2, values percent-encoded); values are secret.",
}

export const otlpProtocolSetting: Setting<"http/protobuf" | "http/json"> = {
  key: "protocol",
  exporter: "otlp",
  env: "OTEL_EXPORTER_OTLP_PROTOCOL",
  flag: "--otlp-protocol",
  type: enumType(["http/protobuf", "http/json"]),
  default: "http/protobuf",
  secret: "none",
  label: "OTLP protocol",
  description: "OTLP encoding over HTTP (gRPC is not supported).",
}

export const otlpCompressionSetting: Setting<"gzip" | "none"> = {
  key: "compression",
  exporter: "otlp",
  env: "OTEL_EXPORTER_OTLP_COMPRESSION",
  flag: "--otlp-compression",
  type: enumType(["gzip", "none"]),
  default: "none",
  secret: "none",
  label: "OTLP compression",
  description: "Compression of export requests.",
}

export const otlpTimeoutSetting: Setting<number> = {
  key: "timeout",
  exporter: "otlp",
  env: "OTEL_EXPORTER_OTLP_TIMEOUT",
  flag: "--otlp-timeout",
  type: millisType,
  default: 10_000,
  secret: "none",
  label: "OTLP timeout",
  bounds: { min: 1, max: HOUR },
  description: "Deadline of one export request (milliseconds as in the OpenTelemetry variable, or a duration).",
  check: positive("OTLP timeout must be > 0"),
}

export const otlpServiceNameSetting: Setting<string> = {
  key: "serviceName",
  exporter: "otlp",
  env: "OTEL_SERVICE_NAME",
  flag: "--otlp-service-name",
  type: stringType,
  default: "gpu-serials",
  secret: "none",
  label: "OTLP service name",
  description: "service.name of the exported resources.",
  check: required("OTLP service name must not be empty"),
}

export const otlpResourceAttributesSetting: Setting<Readonly<Record<string, string>>> = {
  key: "resourceAttributes",
  exporter: "otlp",
  env: "OTEL_RESOURCE_ATTRIBUTES",
  type: pairsType,
  default: {},
  secret: "none",
  label: "OTLP resource attributes",
  description: "Extra resource attributes (k=v,k2=v2, values percent-encoded).",
}

export const otlpMetricsIntervalSetting: Setting<number> = {
  key: "metricsInterval",
  exporter: "otlp",
  env: "OTLP_METRICS_INTERVAL",
  flag: "--otlp-metrics-interval",
  type: durationType,
  default: 60_000,
  secret: "none",
  label: "OTLP metrics interval",
  bounds: { min: SECOND, max: DAY, zeroDisables: true },
  description: "How often metrics are pushed over OTLP; 0 disables OTLP metrics.",
  check: notNegative("OTLP metrics interval must be >= 0 (0 disables OTLP metrics)"),
}

/** Every setting, in the order of the configuration reference. */
export const allSettings: ReadonlyArray<AnySetting> = [
  clusterNameSetting,
  exportersSetting,
  namespaceSetting,
  labelSelectorSetting,
  containerSetting,
  workersSetting,
  timeoutSetting,
  resyncSetting,
  qpsSetting,
  burstSetting,
  kubeconfigSetting,
  nvidiaSmiModeSetting,
  nvidiaSmiMaxOutputSetting,
  nodeLabelsEnabledSetting,
  nodeLabelPrefixSetting,
  reportIntervalSetting,
  removalGraceSetting,
  logLevelSetting,
  serverPortSetting,
  serverAddressSetting,
  shutdownTimeoutSetting,
  leaderElectionSetting,
  leaseNameSetting,
  leaseNamespaceSetting,
  leaseDurationSetting,
  leaseRenewDeadlineSetting,
  leaseRetryPeriodSetting,
  leaderIdentitySetting,
  httpEndpointSetting,
  httpTimeoutSetting,
  httpAuthTokenSetting,
  postgresUrlSetting,
  postgresHostSetting,
  postgresPortSetting,
  postgresDatabaseSetting,
  postgresUserSetting,
  postgresPasswordSetting,
  postgresSslModeSetting,
  postgresTableSetting,
  postgresAutoMigrateSetting,
  natsUrlSetting,
  natsSubjectPrefixSetting,
  natsStreamSetting,
  natsStreamCreateSetting,
  natsStreamDuplicateWindowSetting,
  natsStreamRetentionSetting,
  natsStreamMaxAgeSetting,
  natsStreamMaxBytesSetting,
  natsKvBucketSetting,
  natsCredsSetting,
  natsTokenSetting,
  natsUserSetting,
  natsPasswordSetting,
  natsNkeySeedSetting,
  natsTlsCaSetting,
  natsTlsCertSetting,
  natsTlsKeySetting,
  ...exporterQueueSettingList(natsQueueSettings),
  otlpEndpointSetting,
  otlpLogsEndpointSetting,
  otlpHeadersSetting,
  otlpProtocolSetting,
  otlpCompressionSetting,
  otlpTimeoutSetting,
  otlpServiceNameSetting,
  otlpResourceAttributesSetting,
  otlpMetricsIntervalSetting,
  ...exporterQueueSettingList(otlpQueueSettings),
]

/** The settings of the service itself (not of an exporter). */
export const serviceSettings: ReadonlyArray<AnySetting> = allSettings.filter(
  (setting) => setting.exporter === undefined,
)

/** The settings of one built-in exporter type; empty for types whose sections the exporter validates alone. */
export const exporterSettings = (type: string): ReadonlyArray<AnySetting> =>
  allSettings.filter((setting) => setting.exporter === type)

// ---- rules across settings ------------------------------------------------------------------------------

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
  if (values.get(leaderIdentitySetting)?.trim() === "") {
    problems.push({
      setting: leaderIdentitySetting,
      message: "POD_NAME must be set (downward API) when leader election is enabled",
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

/** Settings this version reads but cannot honour yet: refusing them beats ignoring them. */
const unavailableRule: SettingRule = (values) =>
  values.get(leaderElectionSetting) === true
    ? [{ setting: leaderElectionSetting, message: "leader election is not available in this version; run one replica" }]
    : []

/** Rules across the service's own settings. */
export const serviceRules: ReadonlyArray<SettingRule> = [leaderElectionRule, unavailableRule]

const postgresRule: SettingRule = (values) => {
  // A connection URL carries host, database, user and password itself.
  if (values.origin(postgresUrlSetting).source !== "default") return []
  const missing = (setting: Setting<string>, message: string) =>
    values.get(setting)?.trim() === "" ? [{ setting, message }] : []
  return [
    ...missing(postgresHostSetting, "postgres host is required (set POSTGRES_HOST)"),
    ...missing(postgresDatabaseSetting, "postgres database name is required (set POSTGRES_DB)"),
    ...missing(postgresUserSetting, "postgres user is required (set POSTGRES_USER)"),
    ...missing(postgresPasswordSetting, "postgres password is required (set POSTGRES_PASSWORD)"),
  ]
}

const natsAuthRule: SettingRule = (values) => {
  const problems: Array<{ setting: AnySetting; message: string }> = []
  const user = values.get(natsUserSetting)
  const password = values.get(natsPasswordSetting)
  if (user !== undefined && password === undefined) {
    problems.push({ setting: natsPasswordSetting, message: "NATS user needs a password" })
  }
  if (password !== undefined && user === undefined) {
    problems.push({ setting: natsUserSetting, message: "NATS password needs a user" })
  }
  const methods: ReadonlyArray<AnySetting> = [natsCredsSetting, natsTokenSetting, natsUserSetting, natsNkeySeedSetting]
  const chosen = methods.filter((setting) => values.get(setting) !== undefined)
  for (const setting of chosen.slice(1)) {
    problems.push({
      setting,
      message: "NATS authentication takes only one of creds, token, user/password or nkey seed",
    })
  }
  // Credentials in the URL are used only when no authentication setting is set, so they must agree.
  const url = values.get(natsUrlSetting)
  if (chosen.length === 0 && url !== undefined && natsServerList(url).credentials.length > 1) {
    problems.push({ setting: natsUrlSetting, message: "NATS URL servers must all carry the same credentials" })
  }
  const cert = values.get(natsTlsCertSetting)
  const key = values.get(natsTlsKeySetting)
  if ((cert === undefined) !== (key === undefined)) {
    problems.push({
      setting: cert === undefined ? natsTlsCertSetting : natsTlsKeySetting,
      message: "NATS TLS certificate and key must be set together",
    })
  }
  return problems
}

const natsStreamRule: SettingRule = (values) => {
  const window = values.get(natsStreamDuplicateWindowSetting)
  const maxAge = values.get(natsStreamMaxAgeSetting)
  return window !== undefined && maxAge !== undefined && maxAge > 0 && window > maxAge
    ? [
        {
          setting: natsStreamDuplicateWindowSetting,
          message: "NATS stream duplicate window must not be longer than the stream's max age",
        },
      ]
    : []
}

/** Rules across the settings of one built-in exporter type. */
export const exporterRules = (type: string): ReadonlyArray<SettingRule> =>
  type === "postgres"
    ? [postgresRule]
    : type === "nats"
      ? [natsAuthRule, natsStreamRule, exporterQueueRule(natsQueueSettings)]
      : type === "otlp"
        ? [exporterQueueRule(otlpQueueSettings)]
        : []
