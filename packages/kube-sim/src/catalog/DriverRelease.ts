/** An NVIDIA driver release as nvidia-smi reports it, with the CUDA version it ships. */
export interface DriverRelease {
  readonly version: string
  readonly cudaVersion: string
}

export const driverReleases: ReadonlyArray<DriverRelease> = [
  { version: "535.230.02", cudaVersion: "12.2" },
  { version: "535.247.01", cudaVersion: "12.2" },
  { version: "550.144.03", cudaVersion: "12.4" },
  { version: "550.163.01", cudaVersion: "12.4" },
  { version: "570.86.15", cudaVersion: "12.8" },
  { version: "570.148.08", cudaVersion: "12.8" },
  { version: "570.172.08", cudaVersion: "12.8" },
  { version: "580.65.06", cudaVersion: "13.0" },
  { version: "580.95.05", cudaVersion: "13.0" },
  { version: "590.44.01", cudaVersion: "13.1" },
  { version: "590.48.01", cudaVersion: "13.1" },
]

/** The releases of the given driver branches (`535`, `570`, ...). */
export const releasesOf = (branches: ReadonlyArray<number>): ReadonlyArray<DriverRelease> =>
  driverReleases.filter((release) => branches.includes(branchOf(release.version)))

export const branchOf = (version: string): number => Number.parseInt(version.split(".")[0] ?? "0", 10)

/** True when `version` is the same as or newer than `minimum` (dotted numeric comparison). */
export const isAtLeast = (version: string, minimum: string): boolean => {
  const left = version.split(".").map((part) => Number.parseInt(part, 10))
  const right = minimum.split(".").map((part) => Number.parseInt(part, 10))
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const a = left[index] ?? 0
    const b = right[index] ?? 0
    if (a !== b) return a > b
  }
  return true
}
