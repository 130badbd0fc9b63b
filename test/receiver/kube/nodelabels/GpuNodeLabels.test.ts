import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { isLabelValue } from "../../../../src/kubeclient/labels/LabelValue.ts"
import {
  desiredNodeLabels,
  gpusOfLabels,
  type LabelledGpu,
  labelsUnderPrefix,
} from "../../../../src/receiver/kube/nodelabels/GpuNodeLabels.ts"
import { nodeLabelPatch } from "../../../../src/receiver/kube/nodelabels/NodeLabelPatch.ts"

const prefix = "gpu-serials.dev"

const gpu = (index: number, overrides: Partial<LabelledGpu> = {}): LabelledGpu => ({
  uuid: `GPU-0000000${index}-aaaa-bbbb-cccc-dddddddddddd`,
  node: "gpu-node-a",
  index,
  serial: `165422100${index}`,
  chassis: "",
  lastSeen: 1_000,
  ...overrides,
})

/** The labels after a merge patch is applied, as the API server applies it. */
const applied = (labels: Readonly<Record<string, string>>, patch: Readonly<Record<string, string | null>>) => {
  const next: Record<string, string> = { ...labels }
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key]
    else next[key] = value
  }
  return next
}

describe("label values", () => {
  it("accepts what the API server accepts and nothing else", () => {
    expect(isLabelValue("1654221001")).toBe(true)
    expect(isLabelValue("GPU-8f0f9a0c-1d2e-3f40-5a6b-7c8d9e0f1a2b")).toBe(true)
    expect(isLabelValue("")).toBe(true)
    expect(isLabelValue("a".repeat(63))).toBe(true)
    expect(isLabelValue("a".repeat(64))).toBe(false)
    expect(isLabelValue("-leading")).toBe(false)
    expect(isLabelValue("trailing.")).toBe(false)
    expect(isLabelValue("with space")).toBe(false)
    expect(isLabelValue("slash/inside")).toBe(false)
  })
})

describe("desired node labels", () => {
  it("names each GPU's serial and UUID by index, the chassis once, and the count", () => {
    const desired = desiredNodeLabels(prefix, [gpu(1, { chassis: "1821024000001" }), gpu(0)])
    expect(desired.labels).toEqual({
      "gpu-serials.dev/gpu-0": "1654221000",
      "gpu-serials.dev/gpu-0-uuid": gpu(0).uuid,
      "gpu-serials.dev/gpu-1": "1654221001",
      "gpu-serials.dev/gpu-1-uuid": gpu(1).uuid,
      "gpu-serials.dev/chassis": "1821024000001",
      "gpu-serials.dev/gpu-count": "2",
    })
    expect(desired.skipped).toEqual([])
  })

  it("gives a GPU without a serial no serial label", () => {
    const { serial: _serial, ...withoutSerial } = gpu(0)
    const desired = desiredNodeLabels(prefix, [withoutSerial])
    expect(desired.labels["gpu-serials.dev/gpu-0"]).toBeUndefined()
    expect(desired.labels["gpu-serials.dev/gpu-0-uuid"]).toBe(gpu(0).uuid)
  })

  it("leaves out a value that cannot be a label and reports it", () => {
    const desired = desiredNodeLabels(prefix, [gpu(0, { serial: "serial with spaces", chassis: "x".repeat(64) })])
    expect(desired.labels["gpu-serials.dev/gpu-0"]).toBeUndefined()
    expect(desired.labels["gpu-serials.dev/chassis"]).toBeUndefined()
    expect(desired.skipped.map((skipped) => skipped.label).sort()).toEqual(["chassis", "serial"])
  })

  it("labels the GPU a reading saw last when two hold one index", () => {
    const earlier = gpu(0, { uuid: "GPU-old", lastSeen: 1_000 })
    const later = gpu(0, { uuid: "GPU-new", serial: "999", lastSeen: 2_000 })
    const desired = desiredNodeLabels(prefix, [later, earlier])
    expect(desired.labels["gpu-serials.dev/gpu-0-uuid"]).toBe("GPU-new")
    expect(desired.labels["gpu-serials.dev/gpu-count"]).toBe("1")
  })

  it("is nothing for a node without GPUs", () => {
    expect(desiredNodeLabels(prefix, []).labels).toEqual({})
  })

  it("reads back the GPUs it describes", () => {
    const gpus = [gpu(0, { chassis: "C1" }), gpu(1, { chassis: "C1" }), gpu(2, { chassis: "C1", serial: "" })]
    const back = gpusOfLabels(prefix, { ...desiredNodeLabels(prefix, gpus).labels, "other.io/gpu-0-uuid": "x" })
    expect(back).toEqual([
      { index: 0, uuid: gpu(0).uuid, serial: "1654221000", chassis: "C1" },
      { index: 1, uuid: gpu(1).uuid, serial: "1654221001", chassis: "C1" },
      { index: 2, uuid: gpu(2).uuid, chassis: "C1" },
    ])
  })
})

describe("node label patch", () => {
  it("is nothing when the node already carries the desired labels", () => {
    const desired = desiredNodeLabels(prefix, [gpu(0), gpu(1)]).labels
    expect(nodeLabelPatch(prefix, desired, desired)).toBeUndefined()
  })

  it("removes the labels of indexes gone, in the same patch as the changes", () => {
    const before = desiredNodeLabels(prefix, [gpu(0), gpu(1), gpu(2)]).labels
    const after = desiredNodeLabels(prefix, [gpu(0, { serial: "42" })]).labels
    expect(nodeLabelPatch(prefix, before, after)).toEqual({
      "gpu-serials.dev/gpu-0": "42",
      "gpu-serials.dev/gpu-1": null,
      "gpu-serials.dev/gpu-1-uuid": null,
      "gpu-serials.dev/gpu-2": null,
      "gpu-serials.dev/gpu-2-uuid": null,
      "gpu-serials.dev/gpu-count": "1",
    })
  })

  it("never touches labels of other prefixes", () => {
    const current = { "nvidia.com/gpu.count": "8", "gpu-serials.devx/gpu-0": "x", "gpu-serials.dev/gpu-9": "s" }
    expect(nodeLabelPatch(prefix, current, {})).toEqual({ "gpu-serials.dev/gpu-9": null })
  })

  const gpuArb = fc.record({
    index: fc.integer({ min: 0, max: 9 }),
    serial: fc.option(fc.oneof(fc.stringMatching(/^[0-9]{1,13}$/), fc.string({ maxLength: 70 })), { nil: undefined }),
    chassis: fc.oneof(fc.constant(""), fc.stringMatching(/^[0-9A-Z]{1,20}$/)),
    lastSeen: fc.integer({ min: 0, max: 100 }),
    uuid: fc.uuid().map((uuid) => `GPU-${uuid}`),
  })
  const nodeGpusArb = fc
    .array(gpuArb, { maxLength: 8 })
    .map((gpus) =>
      gpus.map(
        ({ serial, ...rest }): LabelledGpu => ({ ...rest, node: "n", ...(serial === undefined ? {} : { serial }) }),
      ),
    )
  const foreignArb = fc.dictionary(
    fc.constantFrom("nvidia.com/gpu.product", "kubernetes.io/hostname", "gpu-serials.devx/gpu-0"),
    fc.string({ maxLength: 5 }),
  )

  it("brings any labels to the desired ones in one patch, keeps other labels and sends only valid values", () => {
    fc.assert(
      fc.property(nodeGpusArb, nodeGpusArb, foreignArb, (before, after, foreign) => {
        const current = { ...foreign, ...desiredNodeLabels(prefix, before).labels }
        const desired = desiredNodeLabels(prefix, after)
        const patch = nodeLabelPatch(prefix, current, desired.labels) ?? {}
        const result = applied(current, patch)
        expect(labelsUnderPrefix(prefix, result)).toEqual(desired.labels)
        for (const [key, value] of Object.entries(foreign)) expect(result[key]).toBe(value)
        for (const value of Object.values(patch)) if (value !== null) expect(isLabelValue(value)).toBe(true)
        expect(nodeLabelPatch(prefix, result, desired.labels)).toBeUndefined()
      }),
    )
  })
})
