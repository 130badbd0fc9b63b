import type { LeaseSettings } from "../pipeline/Leadership.ts"

/**
 * The effective configuration of the service: its own settings typed, checked and defaulted, and the
 * pipeline's components with the configs their own settings built. Durations are milliseconds
 * (`shutdownTimeoutMs`), sizes bytes.
 */
export interface ServiceConfig {
  /** Written into every record (`cluster`). */
  readonly clusterName: string
  /** The pipeline's receivers, in the order they were listed. */
  readonly receivers: ReadonlyArray<ComponentConfig>
  /** The pipeline's processors, in the order they were listed. */
  readonly processors: ReadonlyArray<ComponentConfig>
  /** The pipeline's exporters, in the order they were listed. */
  readonly exporters: ReadonlyArray<ExporterConfig>
  readonly leaderElection: LeaderElectionConfig
  readonly telemetry: TelemetryConfig
  readonly fleet: FleetConfig
  /** From the first SIGTERM or SIGINT to exit: in-flight reads are abandoned, exporters flush within it. */
  readonly shutdownTimeoutMs: number
}

/** A built-in component of the pipeline with the config its settings built. */
export interface ComponentConfig {
  /** `type`, or `type/name` for an exporter. */
  readonly id: string
  readonly type: string
  readonly config: unknown
}

/**
 * One exporter of the pipeline: a built-in one with its config, or a third-party one with its module and
 * its config-file section (without `module`), for its own factory to validate once the module is loaded.
 */
export type ExporterConfig =
  | ComponentConfig
  | {
      readonly id: string
      readonly type: string
      /** npm package or path of a third-party exporter. */
      readonly module: string
      readonly section: unknown
    }

/** Leader election: whether it runs, and the lease and timings it uses (`LeaseSettings`). */
export interface LeaderElectionConfig extends LeaseSettings {
  readonly enabled: boolean
}

export type LogLevel = "debug" | "info" | "warn" | "error"

export interface TelemetryConfig {
  readonly logLevel: LogLevel
  /** Port of /healthz, /readyz and /metrics. */
  readonly serverPort: number
  /** IP address of that server; empty: every interface. */
  readonly serverAddress: string
  /** Whether `gpu_serials_gpu_info` (one series per known GPU) is reported. */
  readonly gpuInfoMetric: boolean
}

/** The fleet page and JSON API on the health server. */
export interface FleetConfig {
  /** Whether `/`, `/assets` and `/api` are served. */
  readonly page: boolean
  /** Bearer token every `/api` call needs; empty: none. Secret. */
  readonly token: string
  /** Size of the ring of recent events. */
  readonly events: number
}
