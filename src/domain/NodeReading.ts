import type { Gpu } from "./Gpu.ts"

/**
 * What one run of nvidia-smi on a node says: its GPUs and the node-level versions.
 * A reading may carry GPUs and failures together (a device handle that could not be read while
 * the other GPUs answered).
 */
export interface NodeReading {
  readonly gpus: ReadonlyArray<Gpu>
  /** `kmd_version` when present (driver >= 615), else `driver_version`. */
  readonly driverVersion?: string
  /** `cuda_version`, else `cuda_umd_version`; absent before DTD v10, in CSV readings and when `Not Found`. */
  readonly cudaVersion?: string
  /** `attached_gpus` as reported; may exceed `gpus.length` in edited or partial captures. */
  readonly attachedGpus?: number
  /** GPUs the driver listed but could not read. */
  readonly failures: ReadonlyArray<GpuFailure>
  /**
   * Which output format the reading was parsed from: `nvidia-smi -q -x` or `--query-gpu` CSV; or
   * `resourceslices` for a DRA node known from the DRA driver's ResourceSlices alone (no exec, no serial).
   */
  readonly format: "xml" | "csv" | "resourceslices"
}

/**
 * A GPU nvidia-smi knows of but could not read; never carries raw output beyond a short excerpt.
 * `device-handle`: listed in an "Unable to determine the device handle" line; `requires-reset` and `lost`:
 * reported `[GPU requires reset]` or `GPU is lost`; `unidentified`: reported without a usable UUID;
 * `duplicate-uuid`: reported with the UUID of a GPU earlier in the same output, which keeps it.
 */
export interface GpuFailure {
  readonly kind: "device-handle" | "requires-reset" | "lost" | "unidentified" | "duplicate-uuid"
  /** nvidia-smi index when known. */
  readonly index?: number
  /** At most 120 characters, like every value quoted from the output. */
  readonly pciBusId?: string
  /** Short reason, at most 120 characters. */
  readonly reason: string
}
