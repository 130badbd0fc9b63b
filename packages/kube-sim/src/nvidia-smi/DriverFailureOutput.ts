import { branchOf, driverReleases } from "../catalog/DriverRelease.ts"
import type { DriverFailure, HostGpu, SimulatedHost } from "../catalog/SimulatedHost.ts"

/** What nvidia-smi prints, and exits with, on a host whose driver cannot be used at all. */
export interface FatalFailure {
  readonly stdout: string
  readonly exitCode: number
}

/**
 * The fatal failures, with the real tool's wording and return codes: 9 when the kernel driver is not
 * loaded, 18 (NVML_ERROR_LIB_RM_VERSION_MISMATCH) after a driver upgrade without reboot, 6 when no GPU
 * is visible. These go to stdout, as nvidia-smi writes them.
 */
export const fatalFailure = (host: SimulatedHost, failure: DriverFailure): FatalFailure | undefined => {
  switch (failure) {
    case "driver-not-loaded":
      return {
        stdout:
          "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n\n",
        exitCode: 9,
      }
    case "nvml-mismatch":
      return {
        stdout: `Failed to initialize NVML: Driver/library version mismatch\nNVML library version: ${upgradedLibraryVersion(host.driver.version)}\n`,
        exitCode: 18,
      }
    case "no-devices":
      return { stdout: "No devices were found\n", exitCode: 6 }
    case "device-handle":
      return undefined
  }
}

/** The GPU a `device-handle` failure loses: the second one, or the only one. */
export const lostGpuIndex = (host: SimulatedHost): number => (host.gpus.length > 1 ? 1 : 0)

/** The line printed before the output of the GPUs that still answer. */
export const deviceHandleLine = (gpu: HostGpu): string => {
  const hex = (value: number, width: number) => value.toString(16).padStart(width, "0")
  return `Unable to determine the device handle for GPU${gpu.slot.index}: ${hex(gpu.slot.domain, 4)}:${hex(gpu.slot.bus, 2)}:${hex(gpu.slot.device, 2)}.0: Unknown Error\n`
}

/** Exit status when a GPU was lost but the others were reported (nvidia-smi's "other error"). */
export const deviceHandleExitCode = 255

/** The user-space library left behind by a driver upgrade: a newer release of the same branch. */
const upgradedLibraryVersion = (kernelVersion: string): string => {
  const branch = branchOf(kernelVersion)
  const newer = driverReleases.find(
    (release) => branchOf(release.version) === branch && release.version !== kernelVersion,
  )
  const [major, minor] = (newer?.version ?? `${branch}.${Number(kernelVersion.split(".")[1] ?? 0) + 10}`).split(".")
  return `${major}.${minor}`
}
