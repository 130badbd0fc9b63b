import { describe, expect, it } from "vitest"
import { ApiError } from "../../../src/api/ApiStatus.ts"
import type { JsonObject } from "../../../src/api/Json.ts"
import { applyMergePatch } from "../../../src/api/patch/JsonMergePatch.ts"
import { applyJsonPatch } from "../../../src/api/patch/JsonPatch.ts"
import { applyStrategicMergePatch } from "../../../src/api/patch/StrategicMergePatch.ts"

const node = (): JsonObject => ({
  metadata: { name: "n1", labels: { a: "1", b: "2" }, finalizers: ["x"] },
  spec: { taints: [{ key: "t1", effect: "NoSchedule" }] },
  status: {
    conditions: [
      { type: "Ready", status: "True" },
      { type: "MemoryPressure", status: "False" },
    ],
  },
})

describe("JSON merge patch", () => {
  it("merges objects, deletes nulls and replaces lists", () => {
    const patched = applyMergePatch(node(), {
      metadata: { labels: { a: null, c: "3" } },
      spec: { taints: [] },
    })
    expect(patched).toMatchObject({ metadata: { labels: { b: "2", c: "3" } }, spec: { taints: [] } })
    expect((patched as JsonObject & { metadata: { labels: JsonObject } }).metadata.labels.a).toBeUndefined()
  })
})

describe("JSON patch", () => {
  it("applies add, replace, remove, copy, move and test in order", () => {
    const patched = applyJsonPatch(node(), [
      { op: "test", path: "/metadata/name", value: "n1" },
      { op: "add", path: "/metadata/labels/gpu-serials.io~1gpu-0", value: "0654922031993" },
      { op: "replace", path: "/metadata/labels/a", value: "one" },
      { op: "remove", path: "/metadata/labels/b" },
      { op: "copy", from: "/metadata/labels/a", path: "/metadata/labels/copied" },
      { op: "move", from: "/metadata/labels/copied", path: "/metadata/labels/moved" },
      { op: "add", path: "/spec/taints/-", value: { key: "t2", effect: "NoExecute" } },
    ])
    expect(patched).toMatchObject({
      metadata: { labels: { a: "one", "gpu-serials.io/gpu-0": "0654922031993", moved: "one" } },
      spec: { taints: [{ key: "t1" }, { key: "t2" }] },
    })
  })

  it("fails a whole patch with 422 when a test or path fails", () => {
    expect(() => applyJsonPatch(node(), [{ op: "test", path: "/metadata/name", value: "other" }])).toThrow(ApiError)
    expect(() => applyJsonPatch(node(), [{ op: "remove", path: "/metadata/annotations/x" }])).toThrow(/does not apply/)
  })
})

describe("strategic merge patch", () => {
  it("merges conditions by type and keeps the others", () => {
    const patched = applyStrategicMergePatch(node(), {
      status: {
        conditions: [
          { type: "Ready", status: "False" },
          { type: "GpuReported", status: "True" },
        ],
      },
    }) as { status: { conditions: Array<{ type: string; status: string }> } }
    expect(patched.status.conditions).toEqual([
      { type: "Ready", status: "False" },
      { type: "MemoryPressure", status: "False" },
      { type: "GpuReported", status: "True" },
    ])
  })

  it("replaces lists without a merge key, merges set-like lists and honours directives", () => {
    const patched = applyStrategicMergePatch(node(), {
      metadata: { labels: { a: null, z: "26" }, finalizers: ["y"], "$deleteFromPrimitiveList/finalizers": ["x"] },
      spec: { taints: [{ key: "t9", effect: "NoExecute" }] },
      status: { conditions: [{ type: "MemoryPressure", $patch: "delete" }] },
    }) as JsonObject
    expect(patched).toEqual({
      metadata: { name: "n1", labels: { b: "2", z: "26" }, finalizers: ["y"] },
      spec: { taints: [{ key: "t9", effect: "NoExecute" }] },
      status: { conditions: [{ type: "Ready", status: "True" }] },
    })
    expect(
      applyStrategicMergePatch(node(), { metadata: { labels: { $patch: "replace", only: "this" } } }),
    ).toMatchObject({
      metadata: { labels: { only: "this" } },
    })
  })
})
