import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import type { Gpu } from "../../src/domain/Gpu.ts"
import { gpuRecord } from "../../src/domain/GpuRecordBuilder.ts"
import { type KnownGpu, sameFacts } from "../../src/domain/KnownGpu.ts"
import { StoredGpu } from "../../src/domain/StoredGpu.ts"
import { recordJson } from "../../src/exporter/RecordJson.ts"

const migGpu: Gpu = {
  index: 1,
  uuid: "GPU-8d3b6c2e-0f4a-1b5c-9e7d-3a2b1c0d9e8f",
  product: "NVIDIA A100-PCIE-40GB",
  pciBusId: "00000000:CA:00.0",
  migDevices: [
    { uuid: "MIG-1a2b3c4d-5e6f-5a8b-9c0d-1e2f3a4b5c6d", profile: "1g.5gb" },
    { uuid: "MIG-7f6e5d4c-3b2a-5918-8776-655443322110", profile: "1g.5gb" },
  ],
}

const context = {
  cluster: "prod",
  node: "gpu-node-1",
  source: "nvidia-dra-driver-gpu/nvidia-dra-driver-gpu-kubelet-plugin-x7k2q",
  time: new Date("2026-12-02T05:00:00.000Z"),
}

const record = (gpu: Gpu) => gpuRecord({ gpu, reading: {}, context, event: "observed", serialShared: false })

const known = (gpu: Gpu): KnownGpu => ({ node: "gpu-node-1", gpu, serialShared: false }) as unknown as KnownGpu

describe("migDevices", () => {
  it("are on the record after migMode, and absent when the GPU has none", () => {
    const line = recordJson(record(migGpu))
    expect(line.indexOf('"migDevices"')).toBeGreaterThan(line.indexOf('"pciBusId"'))
    expect(JSON.parse(line).migDevices).toEqual(migGpu.migDevices)
    expect(recordJson(record({ ...migGpu, migDevices: [] }))).not.toContain("migDevices")
  })

  it("are part of a GPU's facts: a MIG device added or removed is news", () => {
    const facts = { gpu: migGpu, serialShared: false }
    expect(sameFacts(known(migGpu), facts)).toBe(true)
    expect(sameFacts(known({ ...migGpu, migDevices: migGpu.migDevices?.slice(1) ?? [] }), facts)).toBe(false)
    const { migDevices: _, ...withoutMig } = migGpu
    expect(sameFacts(known(withoutMig), { gpu: { ...migGpu, migDevices: [] }, serialShared: false })).toBe(true)
  })

  it("are kept by the durable stores", () => {
    const decoded = Schema.decodeUnknownSync(StoredGpu)(JSON.parse(JSON.stringify(migGpu)))
    expect(decoded.migDevices).toEqual(migGpu.migDevices)
  })
})
