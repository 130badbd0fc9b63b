import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

/** This process's heap in use after two full collections, in bytes. */
export const liveHeap = (): number => {
  setFlagsFromString("--expose-gc")
  const collectGarbage = runInNewContext("gc") as () => void
  collectGarbage()
  collectGarbage()
  return process.memoryUsage().heapUsed
}
