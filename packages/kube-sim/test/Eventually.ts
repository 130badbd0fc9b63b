import { setTimeout as sleep } from "node:timers/promises"

/** Polls until `condition` holds; fails with `what` after `timeoutMs`. No timing is asserted. */
export const eventually = async (what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}
