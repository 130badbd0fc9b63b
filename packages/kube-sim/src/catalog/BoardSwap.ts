import type { GpuIdentity, HostGpu, SimulatedHost } from "./SimulatedHost.ts"

/** Two boards that traded places in one slot: `toFirst` came from the second host, `toSecond` from the first. */
export interface ExchangedBoards {
  readonly slot: number
  readonly toFirst: GpuIdentity
  readonly toSecond: GpuIdentity
}

/**
 * The GPU slots a board swap at `index` exchanges between two hosts: one GPU, or on two GB200 trays the
 * two-GPU module holding it (its GPUs share a serial). Undefined when a host has no GPU to give.
 */
export const swapSlots = (
  first: SimulatedHost,
  second: SimulatedHost,
  index: number,
): ReadonlyArray<number> | undefined => {
  const width = first.model.name === "gb200-nvl72" && second.model.name === "gb200-nvl72" ? 2 : 1
  const start = Math.min(index - (index % width), Math.min(first.gpus.length, second.gpus.length) - width)
  if (start < 0) return undefined
  return Array.from({ length: width }, (_, offset) => start + offset)
}

/**
 * Moves the boards at `index` from one host to the other and the other's back (an RMA swap), whatever
 * cluster each host is in: the identity (UUID, serial, MIG devices, condition) travels, the slot stays.
 */
export const swapBoards = (
  first: SimulatedHost,
  second: SimulatedHost,
  index: number,
): ReadonlyArray<ExchangedBoards> => {
  if (first === second) throw new RangeError("cannot swap GPUs of a host with itself")
  const slots = swapSlots(first, second, index)
  if (slots === undefined) throw new RangeError("both hosts need GPUs to swap")
  const exchanged = slots.map((slot) => {
    const a = first.gpus[slot] as HostGpu
    const b = second.gpus[slot] as HostGpu
    const toSecond = a.identity
    const toFirst = b.identity
    a.identity = toFirst
    b.identity = toSecond
    return { slot, toFirst, toSecond }
  })
  first.generation++
  second.generation++
  return exchanged
}
