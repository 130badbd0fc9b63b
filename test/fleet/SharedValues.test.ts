import { describe, expect, it } from "vitest"
import { SharedValues } from "../../src/fleet/SharedValues.ts"

describe("SharedValues", () => {
  it("gives one Date per recent time and one pod per source, as records decoded apart repeat them", () => {
    const values = new SharedValues({ names: 100, times: 100 })
    const time = "2026-01-02T03:04:05.000Z"
    const first = values.time(time)
    expect(values.time(JSON.parse(JSON.stringify(time)) as string)).toBe(first)
    expect(first.toISOString()).toBe(time)
    const pod = values.pod("gpu-operator/nvidia-device-plugin-daemonset-abcde")
    expect(values.pod("gpu-operator/nvidia-device-plugin-daemonset-abcde")).toBe(pod)
    expect(pod).toEqual({ namespace: "gpu-operator", name: "nvidia-device-plugin-daemonset-abcde" })
    expect(values.pod("/var/lib/readings/node-1.xml")).toEqual({ namespace: "", name: "/var/lib/readings/node-1.xml" })
  })

  it("keeps at most its bounds: past them each kind starts anew, and what it gave stays as it was", () => {
    const values = new SharedValues({ names: 10, times: 4 })
    const timeOf = (second: number) => `2026-01-02T03:04:${String(second).padStart(2, "0")}.000Z`
    const first = values.time(timeOf(0))
    for (let second = 1; second < 4; second++) values.time(timeOf(second))
    expect(values.time(timeOf(0))).toBe(first)
    // A fifth time: the recent times start anew, and the first is made again.
    values.time(timeOf(4))
    const again = values.time(timeOf(0))
    expect(again).not.toBe(first)
    expect(again.getTime()).toBe(first.getTime())
    for (let name = 0; name < 50; name++) values.text(`node-${name}`)
    expect(values.size).toBeLessThanOrEqual(10 + 4)
    values.clear()
    expect(values.size).toBe(0)
  })
})
