import { describe, expect, it } from "vitest"
import { heard, staleClusters, startLiveness } from "../../../src/processor/fleet/ClusterLiveness.ts"

const at = (seconds: number) => new Date(Date.parse("2026-03-01T00:00:00Z") + seconds * 1_000)

describe("cluster liveness on a hub", () => {
  it("names a cluster stale once not heard of for longer than the threshold, and not once heard again", () => {
    const liveness = startLiveness(at(0))
    heard(liveness, "east", at(10))
    heard(liveness, "west", at(10))
    expect(staleClusters(liveness, ["east", "west"], at(70), 60_000)).toEqual([])
    heard(liveness, "west", at(60))
    expect(staleClusters(liveness, ["east", "west"], at(71), 60_000)).toEqual(["east"])
    heard(liveness, "east", at(72))
    expect(staleClusters(liveness, ["east", "west"], at(73), 60_000)).toEqual([])
  })

  it("counts a cluster never heard of from the hub's start, and ignores a word older than the last", () => {
    const liveness = startLiveness(at(0))
    expect(staleClusters(liveness, ["north"], at(60), 60_000)).toEqual([])
    expect(staleClusters(liveness, ["north"], at(61), 60_000)).toEqual(["north"])
    heard(liveness, "north", at(100))
    heard(liveness, "north", at(50))
    expect(staleClusters(liveness, ["north"], at(160), 60_000)).toEqual([])
    expect(staleClusters(liveness, ["north"], at(161), 60_000)).toEqual(["north"])
  })
})
