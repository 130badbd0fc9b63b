import { describe, expect, it } from "vitest"
import {
  droppedHealthGroups,
  gpuQueryFields,
  healthFieldGroups,
  healthQueryFields,
  queryFieldsFor,
  refusedFieldsForDriverBranch,
} from "../../src/nvsmi/QueryFields.ts"
import { queryPropertyNames } from "../../src/nvsmi/QueryPropertyNames.ts"

describe("--query-gpu field groups", () => {
  it("asks for the identity fields first, then every health group in its newest spelling", () => {
    const fields = queryFieldsFor(new Set())
    expect(fields.slice(0, gpuQueryFields.length)).toStrictEqual([...gpuQueryFields])
    expect(fields.slice(gpuQueryFields.length)).toStrictEqual(
      healthFieldGroups.flatMap((group) => group.spellings[0] ?? []),
    )
    expect(droppedHealthGroups(new Set())).toStrictEqual([])
  })

  it("asks only for fields nvidia-smi lists in --help-query-gpu, and no identity field is a health field", () => {
    const known = new Set(queryPropertyNames)
    for (const field of [...gpuQueryFields, ...healthQueryFields]) {
      expect(known.has(field.toLowerCase()), field).toBe(true)
    }
    expect(gpuQueryFields.filter((field) => healthQueryFields.has(field))).toStrictEqual([])
  })

  it("drops a group whose every spelling has a refused field, and only that group", () => {
    const refused = new Set(["remapped_rows.pending", "clocks_event_reasons.sw_thermal_slowdown"])
    const fields = queryFieldsFor(refused)
    expect(fields.some((field) => field.startsWith("remapped_rows."))).toBe(false)
    expect(fields.filter((field) => field.startsWith("clocks_throttle_reasons."))).toHaveLength(4)
    expect(droppedHealthGroups(refused)).toStrictEqual(["remapped-rows"])
    const bothSpellings = new Set([...refused, "clocks_throttle_reasons.hw_slowdown", "fabric.state"])
    expect(droppedHealthGroups(bothSpellings)).toStrictEqual(["remapped-rows", "clock-events", "fabric"])
    expect(queryFieldsFor(bothSpellings)).toContain("vbios_version")
  })

  it("asks a node labelled with a driver before 580 without the fabric health summary, and the others for it", () => {
    expect([...refusedFieldsForDriverBranch(570)]).toStrictEqual(["fabric.health.summary"])
    expect(queryFieldsFor(refusedFieldsForDriverBranch(575))).toContain("fabric.state")
    expect(refusedFieldsForDriverBranch(580).size).toBe(0)
    expect(refusedFieldsForDriverBranch(undefined).size).toBe(0)
    expect(droppedHealthGroups(refusedFieldsForDriverBranch(570))).toStrictEqual([])
  })
})
