import type { GpuHealthSignals } from "./GpuHealth.ts"

/**
 * One physical GPU as nvidia-smi reports it. Every optional field is absent when the driver
 * reports it as not available (N/A, [N/A], empty, Not Found, bracketed errors, ...).
 */
export interface Gpu {
  /** Position in document order (0-based); equals the nvidia-smi index. */
  readonly index: number
  /** `GPU-xxxxxxxx-...`: the stable identity key. */
  readonly uuid: string
  /** Board serial, kept as a string (leading zeros matter). Not unique: GB200 modules and K80 boards share one. */
  readonly serial?: string
  readonly product?: string
  /** `pci/pci_bus_id`, else the `gpu id=` attribute, else the CSV `pci.bus_id`. */
  readonly pciBusId?: string
  /** `gpu_module_id` (driver <= 555) or `platformInfo/module_id` (driver >= 570). */
  readonly moduleId?: number
  /** `mig_mode/current_mig`: `Enabled` or `Disabled`. */
  readonly migMode?: string
  readonly platform?: GpuPlatform
  /** What the reading says of the GPU's condition; absent when it says nothing (no signal reported). */
  readonly health?: GpuHealthSignals
  /**
   * The MIG devices carved from this GPU, as the NVIDIA DRA driver's ResourceSlices list them (by their
   * `parentUUID`), sorted by UUID; absent when there are none or the GPU was not found through DRA.
   */
  readonly migDevices?: ReadonlyArray<MigDevice>
}

/** A MIG device of a GPU: its `MIG-…` UUID and its profile (`1g.5gb`) when published. */
export interface MigDevice {
  readonly uuid: string
  readonly profile?: string
}

/** `platformInfo` of NVL-class systems (driver >= 570). Absent as a whole when every field is absent. */
export interface GpuPlatform {
  /** Chassis (NVL72 tray) serial: the parent of its GPUs. */
  readonly chassisSerial?: string
  readonly slotNumber?: string
  readonly trayIndex?: string
  readonly hostId?: string
  readonly peerType?: string
  readonly fabricGuid?: string
}
