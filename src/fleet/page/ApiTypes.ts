/** The shapes of the fleet API's answers the page reads (docs/api.md); the server is their authority. */

export type HealthState = "ok" | "degraded" | "failed"

export interface GpuHealth {
  readonly state: HealthState
  readonly reasons: ReadonlyArray<string>
  readonly rmaEligible: boolean
}

export interface Gpu {
  readonly uuid: string
  readonly gpu: string
  /** The GPU's cluster: on a hub's page, the cluster of its last record. */
  readonly cluster?: string
  readonly node: string
  readonly machine: string
  readonly chassis: string
  readonly product?: string
  readonly pciBusId?: string
  readonly moduleId?: number
  readonly index: number
  readonly migMode?: string
  readonly driverVersion?: string
  readonly health?: GpuHealth
  readonly lastSeen: string
  readonly since: string
}

export interface GpuDetail extends Gpu {
  readonly cudaVersion?: string
  readonly providerId?: string
  readonly source: string
  readonly serialShared: boolean
}

export interface GpuPage {
  readonly items: ReadonlyArray<Gpu>
  readonly total: number
  readonly nextCursor?: string
}

export interface HistoryEntry {
  readonly time: string
  readonly event: string
  readonly node: string
  readonly machine: string
  readonly chassis: string
  readonly healthState?: HealthState
  readonly previousHealthState?: HealthState
  readonly previousNode?: string
  readonly previousMachine?: string
  readonly cluster?: string
  readonly previousCluster?: string
}

export interface GpuHistory {
  readonly uuid: string
  readonly from: "postgres" | "process"
  readonly complete: boolean
  readonly note?: string
  readonly entries: ReadonlyArray<HistoryEntry>
}

export interface HealthCounts {
  readonly ok: number
  readonly degraded: number
  readonly failed: number
  readonly unknown: number
}

export interface LastReading {
  readonly time: string
  readonly result: "ok" | "failed"
  readonly failureKind?: string
}

export interface NodeSummary {
  readonly name: string
  readonly machine: string
  readonly gpus: number
  readonly health: HealthCounts
  readonly chassis: ReadonlyArray<string>
  readonly lastReading?: LastReading
}

export interface NodePage {
  readonly items: ReadonlyArray<NodeSummary>
  readonly total: number
  readonly nextCursor?: string
}

export interface NodeDetail extends Omit<NodeSummary, "gpus"> {
  readonly providerId?: string
  readonly failure?: { readonly kind: string; readonly reason: string }
  readonly gpus: ReadonlyArray<Gpu>
}

/** A `gpu-serials/v1` record as the events ring keeps it; only the fields the page shows. */
export interface EventRecord {
  readonly event: string
  readonly id: string
  readonly time: string
  readonly node: string
  readonly machine: string
  readonly chassis: string
  readonly gpu: string
  readonly uuid: string
  readonly index: number
  readonly product?: string
  readonly cluster: string
  readonly previousCluster?: string
  readonly previousNode?: string
  readonly health?: GpuHealth
  readonly previousHealthState?: HealthState
}

export interface EventPage {
  readonly items: ReadonlyArray<EventRecord>
  readonly capacity: number
}

export interface FleetStatus {
  readonly cluster: string
  /** A hub's page: GPUs of every cluster, nodes named `<cluster>/<node>`. */
  readonly acrossClusters?: boolean
  readonly role: "leader" | "follower" | "single"
  readonly leader?: string
  readonly source: "inventory" | "store" | "none"
  readonly gpus: number
  readonly nodes: number
  readonly events: { readonly capacity: number }
  readonly history: "postgres" | "process"
}
