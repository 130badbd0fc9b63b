/**
 * What nvidia-smi says about a GPU's condition, and the verdict drawn from it. Every field is absent when
 * the driver does not report it (older generations, N/A, bracketed errors): absent means unknown, never
 * zero or false. Counts are numbers, flags booleans, names lower-case with dashes.
 */
export interface GpuHealthSignals {
  /** Dynamic page retirement (before Ampere): pages retired for repeated single-bit and for double-bit errors. */
  readonly retiredPages?: RetiredPages
  /** Row remapping (Ampere and later). */
  readonly remappedRows?: RemappedRows
  readonly ecc?: EccCounters
  /** `gpu_recovery_action` (driver 570+), or what `gpu_reset_status` said before it: `none`, `reset`, `reboot`, `drain-p2p`, `drain-and-reset`. */
  readonly recoveryAction?: string
  readonly pcie?: PcieLink
  /** Active clock-event (throttle) reasons among those that point at the hardware, as `clockEvents` names them. */
  readonly clockEvents?: ReadonlyArray<ClockEvent>
  /** NVLink fabric of NVL-class systems (`fabric`, driver 550+). */
  readonly fabric?: FabricState
  readonly vbios?: string
}

export interface RetiredPages {
  /** `multiple_single_bit_retirement/retired_count`. */
  readonly singleBit?: number
  /** `double_bit_retirement/retired_count`. */
  readonly doubleBit?: number
  /** `pending_retirement` (or `pending_blacklist` on old drivers): a retirement waits for a reset. */
  readonly pending?: boolean
}

export interface RemappedRows {
  readonly correctable?: number
  readonly uncorrectable?: number
  /** A remap waits for a reset. */
  readonly pending?: boolean
  /** A remap failed: the board has no spare row left where it needed one. */
  readonly failure?: boolean
}

export interface EccCounters {
  /** `ecc_mode/current` is Enabled. */
  readonly enabled?: boolean
  readonly volatileUncorrectable?: number
  readonly aggregateUncorrectable?: number
  readonly volatileCorrectable?: number
  readonly aggregateCorrectable?: number
}

export interface PcieLink {
  readonly linkGen?: CurrentAndMax
  readonly linkWidth?: CurrentAndMax
  /** `pci/replay_counter`: link-level retransmissions since the driver loaded. */
  readonly replays?: number
}

export interface CurrentAndMax {
  readonly current?: number
  readonly max?: number
}

export interface FabricState {
  /** `fabric/state`, lower-case with dashes: `completed`, `in-progress`, `not-started`, `not-supported`. */
  readonly state?: string
  /** `fabric/status`: `success` or the failure the fabric manager reported. */
  readonly status?: string
  readonly cliqueId?: string
  readonly clusterUuid?: string
  /** `fabric/health/summary`: `healthy`, `unhealthy`, `limited-capacity`, ... */
  readonly summary?: string
}

export const clockEvents = [
  "hw-slowdown",
  "hw-thermal-slowdown",
  "hw-power-brake-slowdown",
  "sw-thermal-slowdown",
] as const

/** A clock-event reason that points at the hardware or its cooling; the application- and power-cap ones are not kept. */
export type ClockEvent = (typeof clockEvents)[number]

export const healthStates = ["ok", "degraded", "failed"] as const

/** `ok`: nothing wrong; `degraded`: works, needs attention (a reset, a reseat, a look); `failed`: must be taken out of service. */
export type HealthState = (typeof healthStates)[number]

/** The record's `health`: the signals as read, the state, the reasons for it, and whether the board qualifies for an RMA. */
export interface GpuHealth extends GpuHealthSignals {
  readonly state: HealthState
  /** Stable reason codes, in the order of the verdict table; empty when `ok`. */
  readonly reasons: ReadonlyArray<string>
  readonly rmaEligible: boolean
}
