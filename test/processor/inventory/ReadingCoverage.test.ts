import { describe, expect, it } from "vitest"
import type { GpuFailure } from "../../../src/domain/NodeReading.ts"
import { provesAbsent } from "../../../src/processor/inventory/ReadingCoverage.ts"
import { h100, hostGpus, reading } from "./Observations.ts"

const gpu0 = h100("a", 0)
const gpu1 = h100("a", 1)
const withoutBusId = { index: 5, uuid: "GPU-no-bus" }

const partial = (failures: ReadonlyArray<GpuFailure>) => provesAbsent(reading(hostGpus("a").slice(2), { failures }))

describe("provesAbsent", () => {
  it("proves every unreported GPU absent when the reading is complete", () => {
    const absent = provesAbsent(reading(hostGpus("a").slice(1)))
    expect(absent(gpu0)).toBe(true)
  })

  it("matches a failed device handle by PCI bus id in either spelling", () => {
    const absent = partial([{ kind: "device-handle", pciBusId: "0000:18:00.0", reason: "Unknown Error" }])
    expect(gpu0.pciBusId).toBe("00000000:18:00.0")
    expect(absent(gpu0)).toBe(false)
    expect(absent(gpu1)).toBe(true)
    expect(absent(withoutBusId)).toBe(false)
  })

  it("matches a failure without bus id by index", () => {
    const absent = partial([{ kind: "requires-reset", index: 1, reason: "GPU requires reset" }])
    expect(absent(gpu1)).toBe(false)
    expect(absent(gpu0)).toBe(true)
  })

  it("proves nothing absent when a failure names neither bus id nor index", () => {
    const absent = partial([{ kind: "unidentified", reason: "reported without a UUID" }])
    expect(absent(gpu0)).toBe(false)
    expect(absent(gpu1)).toBe(false)
  })

  it("proves nothing absent when the reading accounts for fewer GPUs than are attached", () => {
    const absent = provesAbsent(reading(hostGpus("a").slice(1), { attachedGpus: 8 }))
    expect(absent(gpu0)).toBe(false)
    expect(provesAbsent(reading(hostGpus("a").slice(1), { attachedGpus: 7 }))(gpu0)).toBe(true)
  })
})
