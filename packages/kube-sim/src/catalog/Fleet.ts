import { swapBoards } from "./BoardSwap.ts"
import { type CloudName, type NodePool, newMachine, newNodePool } from "./CloudMachine.ts"
import { type DriverRelease, releasesOf } from "./DriverRelease.ts"
import { healthyCondition } from "./GpuCondition.ts"
import { type FleetModelName, fleetModelNames, type GpuModel, gpuModels, type ModelName } from "./GpuModel.ts"
import { SeededRandom } from "./SeededRandom.ts"
import {
  type DriverFailure,
  driverFailures,
  type GpuIdentity,
  type HostGpu,
  pciBusIdOf,
  type RackPosition,
  type SimulatedHost,
} from "./SimulatedHost.ts"

export type ModelMix = Partial<Readonly<Record<FleetModelName, number>>>

export const defaultModelMix: Readonly<Record<FleetModelName, number>> = {
  "h100-hgx": 30,
  "gb200-nvl72": 10,
  "a100-mig": 15,
  t4: 20,
  l40s: 15,
  rtx4090: 5,
  "broken-driver": 5,
}

export interface FleetOptions {
  readonly nodes: number
  readonly modelMix: ModelMix
  readonly seed: string | number
  readonly clusterName: string
}

interface OpenPool {
  readonly pool: NodePool
  readonly model: GpuModel
  readonly fleetModel: FleetModelName
  readonly driver: DriverRelease
  readonly gpuCount: number
  readonly capacity: number
  members: number
  readonly rack: Omit<RackPosition, "slotNumber" | "trayIndex"> | undefined
  readonly migLayout: ReadonlyArray<string>
}

const brokenBases: ReadonlyArray<ModelName> = ["t4", "l40s", "h100-hgx"]
const nvl72TraysPerRack = 18

/**
 * The GPU machines of the simulated cluster, generated deterministically from a seed: node pools per
 * model and cloud, realistic serials, UUIDs and PCI placement, GB200 trays grouped into NVL72 racks that
 * share a chassis serial. Churn adds and removes hosts and moves GPUs between them.
 */
export class Fleet {
  readonly hosts = new Map<string, SimulatedHost>()
  private readonly random: SeededRandom
  private readonly identities: SeededRandom
  private readonly modelMix: Readonly<Record<FleetModelName, number>>
  private readonly clusterName: string
  private readonly openPools = new Map<FleetModelName, OpenPool>()
  private readonly poolsPerModel = new Map<FleetModelName, number>()
  private expected: Readonly<Record<FleetModelName, number>> = defaultModelMix
  private readonly usedSerials = new Set<string>()
  private poolCount = 0
  private hostCount = 0
  private brokenCount = 0

  private constructor(options: FleetOptions) {
    const root = new SeededRandom(options.seed)
    this.random = root.fork("fleet")
    this.identities = root.fork("identities")
    this.modelMix = normalizedMix(options.modelMix)
    this.clusterName = options.clusterName
  }

  static generate(options: FleetOptions): Fleet {
    const fleet = new Fleet(options)
    const counts = apportion(options.nodes, fleet.modelMix)
    fleet.expected = counts
    for (const model of fleetModelNames) for (let index = 0; index < (counts[model] ?? 0); index++) fleet.addHost(model)
    return fleet
  }

  host(nodeName: string): SimulatedHost | undefined {
    return this.hosts.get(nodeName)
  }

  /** Adds one machine of the given model (by default drawn from the model mix) to an open pool or a new one. */
  addHost(model?: FleetModelName): SimulatedHost {
    const fleetModel = model ?? this.random.weighted(this.modelMix)
    let open = this.openPools.get(fleetModel)
    if (open === undefined || open.members >= open.capacity) {
      open = this.openPool(fleetModel)
      this.openPools.set(fleetModel, open)
    }
    let host = this.newHost(open)
    open.members++
    while (this.hosts.has(host.machine.nodeName)) {
      host = this.newHost(open)
      open.members++
    }
    this.hosts.set(host.machine.nodeName, host)
    return host
  }

  removeHost(nodeName: string): SimulatedHost | undefined {
    const host = this.hosts.get(nodeName)
    this.hosts.delete(nodeName)
    return host
  }

  /**
   * Moves a GPU board from one host to another and the other's back (an RMA swap). GB200 boards move as
   * two-GPU modules, which share a serial. Returns the UUIDs that changed host.
   */
  swapGpus(first: SimulatedHost, second: SimulatedHost, index = 0): ReadonlyArray<string> {
    return swapBoards(first, second, index).flatMap(({ toFirst, toSecond }) => [toFirst.uuid, toSecond.uuid])
  }

  /** Breaks (or repairs, with `undefined`) the driver of a host. */
  setFailure(host: SimulatedHost, failure: DriverFailure | undefined): void {
    host.failure = failure
    host.generation++
  }

  /**
   * Opens the next pool of a model. Pools cycle through the model's hostings, so even a small cluster
   * shows several clouds; a pool holds at most a share of the model's nodes per hosting.
   */
  private openPool(fleetModel: FleetModelName): OpenPool {
    const ordinal = this.poolsPerModel.get(fleetModel) ?? 0
    this.poolsPerModel.set(fleetModel, ordinal + 1)
    const model =
      gpuModels[fleetModel === "broken-driver" ? (brokenBases[ordinal % brokenBases.length] ?? "t4") : fleetModel]
    const hosting = model.hostings[ordinal % model.hostings.length] ?? this.random.pick(model.hostings)
    const pool = newNodePool(++this.poolCount, hosting.cloud, hosting.instanceType, this.clusterName, this.random)
    const driver = this.random.pick(releasesOf(model.driverBranches))
    const gpuCount = this.random.pick(model.gpuCounts)
    const share = Math.ceil(Math.max(1, this.expected[fleetModel]) / model.hostings.length)
    const capacity =
      model.name === "gb200-nvl72"
        ? nvl72TraysPerRack
        : fleetModel === "broken-driver"
          ? 1
          : Math.max(1, Math.min(share, this.random.int(4, 32)))
    const rack =
      model.name === "gb200-nvl72"
        ? {
            chassisSerial: this.uniqueSerial(`18212${this.random.digits(2)}`),
            hostId: 1,
            clusterUuid: this.identities.uuid(),
            cliqueId: this.random.int(1, 32),
          }
        : undefined
    const migLayout = model.migLayouts.length === 0 ? [] : this.random.pick(model.migLayouts)
    return { pool, model, fleetModel, driver, gpuCount, capacity, members: 0, rack, migLayout }
  }

  private newHost(open: OpenPool): SimulatedHost {
    const { model, pool } = open
    const hostNumber = ++this.hostCount + 256
    const machine = newMachine(pool, open.members, hostNumber, this.random)
    const hosting = model.hostings.find((candidate) => candidate.cloud === pool.cloud) ?? model.hostings[0]
    const layout = hosting?.layout ?? { slots: [], moduleIds: [] }
    const gpus: HostGpu[] = []
    let moduleSerial = ""
    for (let index = 0; index < open.gpuCount; index++) {
      const place = layout.slots[index] ?? { domain: 0, bus: 1 + index, device: 0 }
      const sharedSerial = model.name === "gb200-nvl72" && index % 2 === 1 ? moduleSerial : undefined
      const identity = this.newIdentity(model, pool.cloud, open.migLayout, sharedSerial)
      moduleSerial = identity.serial
      gpus.push({
        slot: {
          index,
          domain: place.domain,
          bus: place.bus,
          device: place.device,
          pciBusId: pciBusIdOf(place.domain, place.bus, place.device),
          minorNumber: index,
          moduleId: layout.moduleIds[index] ?? index + 1,
        },
        identity,
      })
    }
    const rack: RackPosition | undefined =
      open.rack === undefined ? undefined : { ...open.rack, trayIndex: open.members, slotNumber: open.members + 10 }
    const failure =
      open.fleetModel === "broken-driver" ? driverFailures[this.brokenCount++ % driverFailures.length] : undefined
    return {
      fleetModel: open.fleetModel,
      model,
      pool,
      machine,
      driver: open.driver,
      gpus,
      rack,
      failure,
      generation: 0,
    }
  }

  private newIdentity(
    model: GpuModel,
    cloud: CloudName,
    migLayout: ReadonlyArray<string>,
    sharedSerial: string | undefined,
  ): GpuIdentity {
    const random = this.identities
    const hex = random.hex(32)
    const uuid = `GPU-${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
    const serial = sharedSerial ?? this.boardSerial(model, cloud)
    const migProfiles = migLayout.length > 0 && !random.chance(0.1) ? migLayout : []
    const migUuids = migProfiles.map(() => {
      const mig = random.hex(32)
      return `MIG-${mig.slice(0, 8)}-${mig.slice(8, 12)}-${mig.slice(12, 16)}-${mig.slice(16, 20)}-${mig.slice(20)}`
    })
    const fabricGuid =
      model.name === "gb200-nvl72" ? `0x${random.hex(16)}` : model.nvswitchFabric ? "0x0000000000000000" : "N/A"
    return {
      uuid,
      serial,
      fabricGuid,
      migProfiles,
      migUuids,
      variance: random.int(0, 9999),
      condition: healthyCondition,
    }
  }

  private boardSerial(model: GpuModel, cloud: CloudName): string {
    if (!model.serialAvailable) return "N/A"
    const virtual = cloud !== "bare-metal" && cloud !== "vsphere"
    if (virtual && this.identities.chance(model.scrubbedSerialShare)) return "0000000000000"
    let prefix = this.identities.pick(model.serialPrefixes)
    if (!prefix.startsWith("0") && this.identities.chance(model.leadingZeroShare)) prefix = `0${prefix.slice(1)}`
    return this.uniqueSerial(prefix)
  }

  private uniqueSerial(prefix: string): string {
    let serial: string
    do {
      serial = prefix + this.identities.digits(13 - prefix.length)
    } while (this.usedSerials.has(serial))
    this.usedSerials.add(serial)
    return serial
  }
}

const normalizedMix = (mix: ModelMix): Readonly<Record<FleetModelName, number>> => {
  const given = Object.entries(mix).filter(([, weight]) => typeof weight === "number" && weight > 0)
  if (given.length === 0) return defaultModelMix
  const result = Object.fromEntries(fleetModelNames.map((name) => [name, 0])) as Record<FleetModelName, number>
  for (const [name, weight] of given) {
    if (!(fleetModelNames as ReadonlyArray<string>).includes(name)) throw new RangeError(`unknown GPU model "${name}"`)
    result[name as FleetModelName] = weight as number
  }
  return result
}

/**
 * Node counts per model: every model with a weight gets at least one node when there are enough nodes,
 * the rest is shared by largest remainder, so a small cluster still shows every kind of machine.
 */
const apportion = (nodes: number, mix: Readonly<Record<FleetModelName, number>>): Record<FleetModelName, number> => {
  const models = fleetModelNames.filter((name) => mix[name] > 0)
  const counts = Object.fromEntries(fleetModelNames.map((name) => [name, 0])) as Record<FleetModelName, number>
  const guaranteed = nodes >= models.length ? 1 : 0
  for (const name of models) counts[name] = guaranteed
  const rest = nodes - guaranteed * models.length
  const total = models.reduce((sum, name) => sum + mix[name], 0)
  const shares = models.map((name) => ({ name, exact: (rest * mix[name]) / total }))
  let assigned = 0
  for (const share of shares) {
    const whole = Math.floor(share.exact)
    counts[share.name] += whole
    assigned += whole
  }
  const byRemainder = [...shares].sort((a, b) => b.exact - Math.floor(b.exact) - (a.exact - Math.floor(a.exact)))
  for (let index = 0; index < rest - assigned; index++) {
    const share = byRemainder[index % byRemainder.length]
    if (share !== undefined) counts[share.name]++
  }
  return counts
}
