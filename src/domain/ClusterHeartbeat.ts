/** The schema of a heartbeat message, beside the records' `gpu-serials/v1`. */
export const heartbeatSchema = "gpu-serials/heartbeat/v1"

/**
 * What a cluster's service publishes every `HEARTBEAT_INTERVAL` next to its records, so that a hub knows
 * the cluster is alive while nothing changes in it.
 */
export interface ClusterHeartbeat {
  readonly schema: typeof heartbeatSchema
  readonly cluster: string
  /** RFC 3339 time it was sent. */
  readonly time: string
}
