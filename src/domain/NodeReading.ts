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
  /** `cuda_version` (absent before DTD v10 and when it reads `Not Found`). */
  readonly cudaVersion?: string
  /** `attached_gpus` as reported; may exceed `gpus.length` in edited or partial captures. */
  readonly attachedGpus?: number
  /** GPUs the driver listed but could not read. */
  readonly failures: ReadonlyArray<GpuFailure>
  /** Which output format the reading was parsed from. */
  readonly format: "xml" | "csv" | "text"
}

/** A GPU nvidia-smi knows of but could not read; never carries raw output beyond a short excerpt. */
export interface GpuFailure {
  readonly kind: "device-handle" | "requires-reset" | "unidentified"
  /** nvidia-smi index when known. */
  readonly index?: number
  readonly pciBusId?: string
  /** Short reason, at most 120 characters. */
  readonly reason: string
}
