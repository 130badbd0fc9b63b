/**
 * The effective configuration of the service: every value typed, checked and defaulted. Durations are
 * milliseconds (`timeoutMs`), sizes bytes.
 */
export interface ServiceConfig {
  /** Written into every record (`cluster`). */
  readonly clusterName: string
  readonly kubeExec: KubeExecConfig
  readonly inventory: InventoryConfig
  /** The pipeline's exporters, in the order they were listed. */
  readonly exporters: ReadonlyArray<ExporterConfig>
  readonly leaderElection: LeaderElectionConfig
  readonly telemetry: TelemetryConfig
  /** From the first SIGTERM or SIGINT to exit: in-flight reads are abandoned, exporters flush within it. */
  readonly shutdownTimeoutMs: number
}

export type NvidiaSmiMode = "auto" | "xml" | "csv"

/** The `kube_exec` receiver: which pods are read, how fast, and what is written back to nodes. */
export interface KubeExecConfig {
  readonly namespace: string
  readonly labelSelector: string
  readonly container: string
  readonly workers: number
  /** Deadline per pod: exec, node lookup and hand-off to the exporters. */
  readonly timeoutMs: number
  /** 0: no periodic resync. */
  readonly resyncMs: number
  readonly qps: number
  readonly burst: number
  /** Empty: in-cluster config, then the default kubeconfig. */
  readonly kubeconfig: string
  readonly nvidiaSmi: {
    readonly mode: NvidiaSmiMode
    readonly maxOutputBytes: number
  }
  readonly nodeLabels: {
    readonly enabled: boolean
    /** DNS subdomain: labels are `<prefix>/gpu-<index>`. */
    readonly prefix: string
  }
}

/** The `inventory` processor. */
export interface InventoryConfig {
  /** How often unchanged GPUs are re-affirmed as `observed`; 0: never. */
  readonly reportIntervalMs: number
  /** How long a gone node, pod or GPU is kept before its GPUs are removed. */
  readonly removalGraceMs: number
}

/**
 * One exporter component of the pipeline. `section` is its config-file section (without `module`): for
 * the built-in types with settings (http, postgres, nats, otlp) already checked, with every default filled
 * in and the environment variables and flags applied; for the others as written, for their factory to
 * validate.
 */
export interface ExporterConfig {
  /** `type` or `type/name`, as in the config file. */
  readonly id: string
  readonly type: string
  /** npm package or path of a third-party exporter. */
  readonly module?: string
  readonly section: unknown
}

export interface LeaderElectionConfig {
  readonly enabled: boolean
  readonly leaseName: string
  readonly leaseNamespace: string
  readonly leaseDurationMs: number
  readonly renewDeadlineMs: number
  readonly retryPeriodMs: number
  /** Holder identity written into the lease: the pod name. */
  readonly identity: string
}

export type LogLevel = "debug" | "info" | "warn" | "error"

export interface TelemetryConfig {
  readonly logLevel: LogLevel
  /** Port of /healthz, /readyz and /metrics. */
  readonly serverPort: number
  /** IP address of that server; empty: every interface. */
  readonly serverAddress: string
}
