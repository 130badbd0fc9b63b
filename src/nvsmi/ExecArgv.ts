/**
 * Where nvidia-smi is in the container and the NVML library it needs preloaded: in the NVIDIA DRA driver's
 * kubelet-plugin container nvidia-smi is not on `PATH` and finds no `libnvidia-ml.so.1` of its own, so the
 * driver itself runs `env -i LD_PRELOAD=<library> <root>/usr/bin/nvidia-smi` (`hack/kubelet-plugin-prestart.sh`).
 */
export interface NvidiaSmiBinary {
  /** An absolute path or a bare name on the container's `PATH`. */
  readonly path: string
  /** Absolute path of `libnvidia-ml.so.1`; empty or absent runs nvidia-smi without a preload. */
  readonly mlLibrary?: string | undefined
}

export const plainNvidiaSmi: NvidiaSmiBinary = { path: "nvidia-smi" }

/**
 * The argv that runs nvidia-smi with `queryArgv` (which starts with `nvidia-smi`, as `nvsmi/Command`
 * builds it): the binary's path as argv[0], or `env LD_PRELOAD=<library> <path>` when a library is set.
 * `env` reads no command line, so each argument stays one argument and no shell runs.
 */
export const execArgvFor = (binary: NvidiaSmiBinary, queryArgv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const args = queryArgv.slice(1)
  const library = binary.mlLibrary ?? ""
  return library === "" ? [binary.path, ...args] : ["env", `LD_PRELOAD=${library}`, binary.path, ...args]
}
