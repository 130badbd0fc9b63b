import { spawnSync } from "node:child_process"
import { cpus } from "node:os"

/**
 * Each measured process on a core of its own, as a cluster gives the API server and the service machines
 * of their own: the simulated API server on core 0, the process measured (the service, or the exec floor)
 * on core 1. Without `taskset` or on a one-core machine the processes run unpinned, with one warning.
 */
export const simulatorCore = 0
export const measuredCore = 1

const tasksetFound = (): boolean => spawnSync("taskset", ["--version"], { stdio: "ignore" }).status === 0

let unpinnedWarned = false

/** Why processes cannot be pinned here, or undefined when they can. */
const unpinnedReason = (core: number): string | undefined => {
  if (cpus().length <= core) return `this machine has ${cpus().length} core(s)`
  if (!tasksetFound()) return "taskset is not installed (util-linux)"
  return undefined
}

/**
 * Pins every thread of a process to one core (`taskset -a -p`); threads it starts later inherit that.
 * Returns false, and warns once on stderr, where the process stays unpinned.
 */
export const pinToCore = (pid: number | undefined, core: number): boolean => {
  const reason = unpinnedReason(core)
  if (reason !== undefined) {
    if (!unpinnedWarned) process.stderr.write(`warning: processes run unpinned, sharing the cores: ${reason}\n`)
    unpinnedWarned = true
    return false
  }
  return (
    pid !== undefined &&
    spawnSync("taskset", ["-a", "-pc", String(core), String(pid)], { stdio: "ignore" }).status === 0
  )
}
