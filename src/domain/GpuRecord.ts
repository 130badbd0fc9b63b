import type { MigDevice } from "./Gpu.ts"
import type { GpuHealth, HealthState } from "./GpuHealth.ts"
import type { InventoryEventKind } from "./InventoryEventKind.ts"

export const recordSchema = "gpu-serials/v1"

/**
 * The `gpu-serials/v1` record: one per GPU per event. The first seven fields are the Go original's
 * (`cluster, node, machine, source, chassis, gpu, time`) and are always present, as strings, so its
 * consumers keep working; absent values there are empty strings, never "N/A". Every other optional
 * field is omitted when the GPU does not report it.
 */
export interface GpuRecord {
  readonly schema: typeof recordSchema
  readonly event: InventoryEventKind
  /** Deterministic: the same event of the same reading always has the same id (idempotency key). */
  readonly id: string
  readonly cluster: string
  readonly node: string
  /** Machine id derived from the node's `spec.providerID`; `na` when it has none. */
  readonly machine: string
  /** Where the reading came from: `<namespace>/<pod>` of the device-plugin pod, or a file for `parse`. */
  readonly source: string
  /** Chassis serial (NVL72 tray); empty when the GPU has none. */
  readonly chassis: string
  /** GPU serial; empty when the GPU reports none. Not unique (see `serialShared`). */
  readonly gpu: string
  /** RFC 3339 time of the reading. */
  readonly time: string
  readonly uuid: string
  readonly index: number
  readonly product?: string
  readonly pciBusId?: string
  readonly moduleId?: number
  readonly migMode?: string
  /** The GPU's MIG devices as the DRA driver's ResourceSlices list them; absent when none. */
  readonly migDevices?: ReadonlyArray<MigDevice>
  readonly driverVersion?: string
  readonly cudaVersion?: string
  readonly providerId?: string
  /** True when another GPU of the same reading reports the same serial (GB200 modules, K80 boards). */
  readonly serialShared: boolean
  /** For `moved` across clusters, on a hub: the cluster the GPU was in before; absent for a move within a cluster. */
  readonly previousCluster?: string
  /** For `moved`: where the GPU was before. */
  readonly previousNode?: string
  readonly previousMachine?: string
  /** The GPU's condition and its verdict; absent when the reading said nothing of it. */
  readonly health?: GpuHealth
  /** For `health`: the state before the change. */
  readonly previousHealthState?: HealthState
}
