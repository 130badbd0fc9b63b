import { swapBoards, swapSlots } from "../catalog/BoardSwap.ts"
import type { Fleet } from "../catalog/Fleet.ts"
import { SeededRandom } from "../catalog/SeededRandom.ts"
import type { HostGpu, SimulatedHost } from "../catalog/SimulatedHost.ts"
import type { BoardPlace } from "../ledger/BoardPlace.ts"
import { trueHealthState } from "../ledger/TrueHealth.ts"
import type { BoardCrossing, CrossClusterSwap } from "./CrossClusterSwap.ts"
import type { ExchangeMember } from "./ExchangeMember.ts"

export interface BoardExchangeOptions {
  /** Same seed (and same clusters), same swaps. Default `board-exchange`. */
  readonly seed?: string | number
}

/** A node of a cluster of the exchange, as a test names one end of a swap. */
export interface NodeOfCluster {
  readonly cluster: string
  readonly node: string
}

const tickMs = 250

/** Hosts whose boards can be swapped at random: a working driver and at least one GPU. */
const swappable = (fleet: Fleet): ReadonlyArray<SimulatedHost> =>
  [...fleet.hosts.values()].filter((host) => host.failure === undefined && host.gpus.length > 0)

const healthy = (gpu: HostGpu | undefined): boolean =>
  gpu !== undefined && trueHealthState(gpu.identity.condition) === "ok"

const placeOf = (member: ExchangeMember, host: SimulatedHost): BoardPlace => ({
  cluster: member.cluster,
  node: host.machine.nodeName,
  providerId: host.machine.providerId,
})

/**
 * Boards swapped between simulated clusters in one process: every cluster started with the same exchange
 * (`startSimulatedCluster({ exchange })`) lends it its hosts, and at each cluster's
 * `crossClusterSwapsPerMinute` (a Poisson process) a healthy board of one of its working hosts trades
 * places with the board in the same slot of a host of the same model in another cluster. The board keeps
 * its identity (UUID, serial, MIG devices, condition), both nodes' device-plugin pods restart, and both
 * ledgers record both ends. One timer and one seeded stream make every swap, clusters taken in name
 * order, so the same seed and the same clusters give the same swaps. A swap happens at once in both
 * clusters: no UUID is ever in two of them.
 */
export class BoardExchange {
  private readonly random: SeededRandom
  private readonly members = new Map<string, ExchangeMember>()
  private readonly recorded: Array<CrossClusterSwap> = []
  private timer: NodeJS.Timeout | undefined

  constructor(options: BoardExchangeOptions = {}) {
    this.random = new SeededRandom(options.seed ?? "board-exchange")
  }

  /** The clusters in the exchange now, by name. */
  clusters(): ReadonlyArray<string> {
    return [...this.members.keys()].sort()
  }

  /** Every swap so far, oldest first. */
  swaps(): ReadonlyArray<CrossClusterSwap> {
    return this.recorded
  }

  /**
   * Swaps the boards at `index` (default 0) of two nodes in two clusters of the exchange now, whatever their
   * models and health. Returns the swap as the ledgers record it.
   */
  swap(first: NodeOfCluster, second: NodeOfCluster, options: { readonly index?: number } = {}): CrossClusterSwap {
    if (first.cluster === second.cluster)
      throw new RangeError(`both nodes are in cluster "${first.cluster}": use the cluster's swapGpus`)
    const [a, hostA] = this.locate(first)
    const [b, hostB] = this.locate(second)
    if (swapSlots(hostA, hostB, options.index ?? 0) === undefined) throw new RangeError("both hosts need GPUs to swap")
    return this.exchange(a, hostA, b, hostB, options.index ?? 0)
  }

  /**
   * Refuses a cluster the exchange cannot take: its name is taken, or it has a GPU UUID a cluster of the
   * exchange has (clusters started from the same seed have the same boards).
   */
  admit(cluster: string, fleet: Fleet): void {
    if (this.members.has(cluster))
      throw new RangeError(`the board exchange already has a cluster named "${cluster}": give each its own clusterName`)
    const uuids = new Set([...fleet.hosts.values()].flatMap((host) => host.gpus.map((gpu) => gpu.identity.uuid)))
    for (const member of this.members.values())
      for (const host of member.fleet.hosts.values())
        for (const gpu of host.gpus)
          if (uuids.has(gpu.identity.uuid))
            throw new RangeError(
              `cluster "${cluster}" has GPU ${gpu.identity.uuid} that cluster "${member.cluster}" has: give each cluster its own seed`,
            )
  }

  /** Takes a started cluster in; its swaps start at the next tick. */
  join(member: ExchangeMember): void {
    this.admit(member.cluster, member.fleet)
    this.members.set(member.cluster, member)
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.tick(), tickMs)
      this.timer.unref()
    }
  }

  /** Lets a closing cluster go: no swap involves it from now on. */
  leave(cluster: string): void {
    this.members.delete(cluster)
    if (this.members.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }

  private locate(place: NodeOfCluster): readonly [ExchangeMember, SimulatedHost] {
    const member = this.members.get(place.cluster)
    if (member === undefined) throw new RangeError(`no cluster "${place.cluster}" in the board exchange`)
    const host = member.fleet.host(place.node)
    if (host === undefined) throw new RangeError(`no GPU node "${place.node}" in cluster "${place.cluster}"`)
    return [member, host]
  }

  private tick(): void {
    const members = this.clusters().flatMap((name) => {
      const member = this.members.get(name)
      return member === undefined ? [] : [member]
    })
    // Draws only with a partner to swap with, so how long a cluster waited alone changes no later swap.
    if (members.length < 2) return
    for (const initiator of members) {
      const count = this.random.poisson((initiator.swapsPerMinute() * tickMs) / 60_000)
      for (let index = 0; index < count; index++) this.swapRandomBoards(initiator, members)
    }
  }

  private swapRandomBoards(initiator: ExchangeMember, members: ReadonlyArray<ExchangeMember>): void {
    const partner = this.random.pick(members.filter((member) => member !== initiator))
    const offered = swappable(partner.fleet)
    const models = new Set(offered.map((host) => host.fleetModel))
    const own = swappable(initiator.fleet).filter((host) => models.has(host.fleetModel))
    if (own.length === 0) return
    const first = this.random.pick(own)
    const second = this.random.pick(offered.filter((host) => host.fleetModel === first.fleetModel))
    const index = this.random.int(0, Math.min(first.gpus.length, second.gpus.length) - 1)
    const slots = swapSlots(first, second, index) ?? []
    // A board in a fault's course stays where its cluster's health faults follow it.
    if (slots.length === 0 || !slots.every((slot) => healthy(first.gpus[slot]) && healthy(second.gpus[slot]))) return
    this.exchange(initiator, first, partner, second, index)
  }

  private exchange(
    a: ExchangeMember,
    hostA: SimulatedHost,
    b: ExchangeMember,
    hostB: SimulatedHost,
    index: number,
  ): CrossClusterSwap {
    const time = new Date()
    const swap = this.recorded.length + 1
    const placeA = placeOf(a, hostA)
    const placeB = placeOf(b, hostB)
    const exchanged = swapBoards(hostA, hostB, index)
    const boards: Array<BoardCrossing> = []
    for (const { toFirst, toSecond } of exchanged) {
      boards.push({ uuid: toSecond.uuid, serial: toSecond.serial, from: placeA, to: placeB })
      boards.push({ uuid: toFirst.uuid, serial: toFirst.serial, from: placeB, to: placeA })
    }
    // Each ledger ends the leaving boards' stays before it starts the arriving ones'.
    for (const { toFirst, toSecond } of exchanged) {
      a.recordDeparture(hostA, toSecond, swap, placeB, time)
      b.recordDeparture(hostB, toFirst, swap, placeA, time)
    }
    for (const { toFirst, toSecond } of exchanged) {
      a.recordArrival(hostA, toFirst, swap, placeB, time)
      b.recordArrival(hostB, toSecond, swap, placeA, time)
    }
    const recorded: CrossClusterSwap = { swap, time: time.toISOString(), boards }
    this.recorded.push(recorded)
    a.boardsChanged(hostA)
    b.boardsChanged(hostB)
    return recorded
  }
}
