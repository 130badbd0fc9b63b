import { describe, expect, it } from "vitest"
import {
  CommandFailed,
  DeviceHandleFailure,
  DriverNotLoaded,
  EmptyOutput,
  GpuRequiresReset,
  MalformedOutput,
  NoDevicesFound,
  NotNvidiaSmiOutput,
  NvmlInitFailed,
  NvmlVersionMismatch,
  type NvsmiError,
  nvsmiErrorKinds,
  OutputTooLarge,
  TruncatedOutput,
  UnsupportedQueryField,
} from "../../src/nvsmi/NvsmiError.ts"
import { outputExcerpt } from "../../src/nvsmi/OutputExcerpt.ts"

const everyError: ReadonlyArray<NvsmiError> = [
  new EmptyOutput(),
  new OutputTooLarge({ maxBytes: 8, receivedBytes: 9 }),
  new NotNvidiaSmiOutput({ excerpt: "x" }),
  new TruncatedOutput({ detail: "unclosed tag: gpu" }),
  new MalformedOutput({ detail: "unexpected close tag." }),
  new NoDevicesFound(),
  new DriverNotLoaded({ excerpt: "NVIDIA-SMI has failed" }),
  new NvmlVersionMismatch({ libraryVersion: "570.124" }),
  new NvmlInitFailed({ reason: "Unknown Error" }),
  new DeviceHandleFailure({ failures: [{ kind: "device-handle", index: 1, reason: "Unknown Error" }] }),
  new GpuRequiresReset({ gpuCount: 2 }),
  new UnsupportedQueryField({ field: "platform.chassis_serial_number" }),
  new CommandFailed({ exitCode: 1, excerpt: "" }),
]

describe("NvsmiError", () => {
  it("gives every error a distinct stable kind from the published list and a message", () => {
    expect(everyError.map((error) => error.kind)).toStrictEqual(nvsmiErrorKinds)
    for (const error of everyError) {
      expect(error.message.length).toBeGreaterThan(10)
      expect(error.message).not.toContain("\n")
    }
  })

  it("serialises its fields and kind, which is what logs see", () => {
    expect(JSON.parse(JSON.stringify(new NvmlVersionMismatch({ libraryVersion: "570.124" })))).toStrictEqual({
      _tag: "NvmlVersionMismatch",
      kind: "nvml-version-mismatch",
      libraryVersion: "570.124",
    })
  })

  it("names at most three failed GPUs in the device-handle message", () => {
    const failures = [0, 1, 2, 3, 4].map((index) => ({
      kind: "device-handle" as const,
      index,
      reason: "Unknown Error",
    }))
    const message = new DeviceHandleFailure({ failures, survivingGpus: 3 }).message
    expect(message).toContain("GPU 2: Unknown Error and 2 more")
    expect(message).toContain("still shows 3 GPU(s)")
  })
})

describe("outputExcerpt", () => {
  it("keeps a short line as it is", () => {
    expect(outputExcerpt("No devices were found\n")).toBe("No devices were found")
  })

  it("makes one printable line of at most 120 characters", () => {
    const excerpt = outputExcerpt(`\u001b[4mGPU0\u001b[0m\tline one\r\nline\u0000two\u202e${"x".repeat(500)}`)
    expect(excerpt.startsWith("GPU0 line one line two")).toBe(true)
    expect(Array.from(excerpt)).toHaveLength(120)
    expect(excerpt).not.toMatch(/[\p{Cc}\p{Cf}]/u)
  })
})
