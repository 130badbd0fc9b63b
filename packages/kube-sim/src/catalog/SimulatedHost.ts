import type { CloudMachine, NodePool } from "./CloudMachine.ts"
import type { DriverRelease } from "./DriverRelease.ts"
import type { GpuCondition } from "./GpuCondition.ts"
import type { FleetModelName, GpuModel } from "./GpuModel.ts"

/** How a host's driver can be broken, each with the output real nvidia-smi gives for it. */
export const driverFailures = ["driver-not-loaded", "nvml-mismatch", "no-devices", "device-handle"] as const
export type DriverFailure = (typeof driverFailures)[number]

/** What travels with a physical GPU board when it is moved to another host. */
export interface GpuIdentity {
  readonly uuid: string
  /** 13-digit board serial, or `N/A` where the product reports none. Shared by the two GPUs of a GB200 module. */
  readonly serial: string
  readonly fabricGuid: string
  /** MIG instance profiles, empty when MIG is disabled (MIG mode is persistent per GPU). */
  readonly migProfiles: ReadonlyArray<string>
  readonly migUuids: ReadonlyArray<string>
  /** Per-board spread for temperatures, power and memory use, so boards do not all read alike. */
  readonly variance: number
  /** What the board's memory, link and fabric report now; health faults change it, a reset restores it. */
  condition: GpuCondition
}

/** Where a GPU sits in its host: fixed by the board design, not by the GPU. */
export interface GpuSlot {
  readonly index: number
  readonly domain: number
  readonly bus: number
  readonly device: number
  /** `DDDDDDDD:BB:DD.F` with upper-case hex, as `-q -x` writes it. */
  readonly pciBusId: string
  readonly minorNumber: number
  readonly moduleId: number
}

export interface HostGpu {
  readonly slot: GpuSlot
  identity: GpuIdentity
}

/** Position of a GB200 NVL72 compute tray in its rack; the chassis serial is the rack's. */
export interface RackPosition {
  readonly chassisSerial: string
  readonly slotNumber: number
  readonly trayIndex: number
  readonly hostId: number
  readonly clusterUuid: string
  readonly cliqueId: number
}

/** A GPU machine behind one Kubernetes node. */
export interface SimulatedHost {
  readonly fleetModel: FleetModelName
  readonly model: GpuModel
  readonly pool: NodePool
  readonly machine: CloudMachine
  readonly driver: DriverRelease
  readonly gpus: HostGpu[]
  readonly rack: RackPosition | undefined
  failure: DriverFailure | undefined
  /** Bumped whenever what nvidia-smi reports on this host changes (a GPU swap, a driver failure). */
  generation: number
}

export const pciBusIdOf = (domain: number, bus: number, device: number): string =>
  `${hex(domain, 8)}:${hex(bus, 2)}:${hex(device, 2)}.0`

const hex = (value: number, width: number): string => value.toString(16).toUpperCase().padStart(width, "0")
