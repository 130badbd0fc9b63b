import { describe, expect, it } from "vitest"
import { classifyFailureOutput, unsupportedQueryFieldIn } from "../../src/nvsmi/FailureOutput.ts"
import { describeWithFixtures, readFixtureText } from "../support/fixtures.ts"

const driverNotLoaded =
  "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."

describeWithFixtures("classifyFailureOutput on the corpus", () => {
  it("reads error-driver-not-loaded.txt as driver-not-loaded", () => {
    const error = classifyFailureOutput(readFixtureText("error-driver-not-loaded.txt"))
    expect(error?._tag).toBe("DriverNotLoaded")
    expect(error?.kind).toBe("driver-not-loaded")
  })

  it("reads error-no-devices-found.txt as no-devices", () => {
    const error = classifyFailureOutput(readFixtureText("error-no-devices-found.txt"))
    expect(error?._tag).toBe("NoDevicesFound")
    expect(error?.kind).toBe("no-devices")
  })

  it("reads error-nvml-driver-library-version-mismatch.txt with the library version", () => {
    const error = classifyFailureOutput(readFixtureText("error-nvml-driver-library-version-mismatch.txt"))
    expect(error?.kind).toBe("nvml-version-mismatch")
    expect(error?._tag === "NvmlVersionMismatch" && error.libraryVersion).toBe("570.124")
  })

  it("reads the partial table of error-device-handle-unknown-error-partial-table-driver610.txt", () => {
    const error = classifyFailureOutput(
      readFixtureText("error-device-handle-unknown-error-partial-table-driver610.txt"),
    )
    expect(error?.kind).toBe("device-handle")
    expect(error?._tag === "DeviceHandleFailure" && error.failures).toStrictEqual([
      { kind: "device-handle", index: 1, pciBusId: "0000:34:00.0", reason: "Unknown Error" },
    ])
    expect(error?._tag === "DeviceHandleFailure" && error.survivingGpus).toBe(3)
  })

  it("reads error-gpu-requires-reset-query-gpu-noheader.csv as gpu-requires-reset for both GPUs", () => {
    const error = classifyFailureOutput(readFixtureText("error-gpu-requires-reset-query-gpu-noheader.csv"))
    expect(error?.kind).toBe("gpu-requires-reset")
    expect(error?._tag === "GpuRequiresReset" && error.gpuCount).toBe(2)
  })
})

describe("classifyFailureOutput", () => {
  it("recognises the driver message with a typographic apostrophe or wrapped over two lines", () => {
    expect(classifyFailureOutput(driverNotLoaded.replace("'", "’"))?.kind).toBe("driver-not-loaded")
    expect(classifyFailureOutput(driverNotLoaded.replace(" communicate ", "\ncommunicate "))?.kind).toBe(
      "driver-not-loaded",
    )
    expect(classifyFailureOutput(driverNotLoaded.replace(" the NVIDIA driver.", " the NVIDIA\r\ndriver."))?.kind).toBe(
      "driver-not-loaded",
    )
  })

  it("keeps only a short single-line excerpt of what was printed", () => {
    const error = classifyFailureOutput(`${driverNotLoaded}\n${"noise ".repeat(1000)}`)
    expect(error?._tag === "DriverNotLoaded" && Array.from(error.excerpt).length).toBeLessThanOrEqual(120)
    expect(error?._tag === "DriverNotLoaded" && error.excerpt).not.toContain("\n")
  })

  it("recognises the NVML mismatch of older drivers, which print no library version", () => {
    const error = classifyFailureOutput("Failed to initialize NVML: Driver/library version mismatch\n")
    expect(error?.kind).toBe("nvml-version-mismatch")
    expect(error?._tag === "NvmlVersionMismatch" && "libraryVersion" in error).toBe(false)
  })

  it("recognises other NVML initialisation failures with their reason", () => {
    const error = classifyFailureOutput("Failed to initialize NVML: Unknown Error\n")
    expect(error?.kind).toBe("nvml-init-failed")
    expect(error?.message).toBe("nvidia-smi could not initialise NVML: Unknown Error")
  })

  it("recognises a rejected query field, with straight or typographic quotes", () => {
    expect(
      classifyFailureOutput('Field "platform.chassis_serial_number" is not a valid field to query.\n\n'),
    ).toMatchObject({ kind: "unsupported-query-field", field: "platform.chassis_serial_number" })
    expect(unsupportedQueryFieldIn("Field “encoder.stats.sessionCount” is not a valid field to query.")).toBe(
      "encoder.stats.sessionCount",
    )
    expect(unsupportedQueryFieldIn("No devices were found")).toBeUndefined()
  })

  it("recognises the older device-handle line without an index and with no table after it", () => {
    const error = classifyFailureOutput("Unable to determine the device handle for GPU 0000:34:00.0: Unknown Error\n")
    expect(error?._tag === "DeviceHandleFailure" && error.failures).toStrictEqual([
      { kind: "device-handle", pciBusId: "0000:34:00.0", reason: "Unknown Error" },
    ])
    expect(error?._tag === "DeviceHandleFailure" && "survivingGpus" in error).toBe(false)
  })

  it("falls back on the exit code nvidia-smi documents for a driver that is not loaded", () => {
    expect(classifyFailureOutput("", 9)?.kind).toBe("driver-not-loaded")
    expect(classifyFailureOutput("", 1)).toBeUndefined()
  })

  it("says nothing about output it does not recognise", () => {
    expect(classifyFailureOutput("==============NVSMI LOG==============")).toBeUndefined()
    expect(classifyFailureOutput("")).toBeUndefined()
  })
})
