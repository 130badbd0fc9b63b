import type { SimulatedHost } from "../catalog/SimulatedHost.ts"

/** Where the host's driver is seen in the `gpus` container: its root is mounted at `/driver-root`. */
export const draDriverRoot = {
  nvidiaSmi: "/driver-root/usr/bin/nvidia-smi",
  /** The library directory of a Debian or Ubuntu host (RHEL-like hosts have `/driver-root/usr/lib64`). */
  libraryDirectory: "/driver-root/usr/lib/x86_64-linux-gnu",
} as const

/** What a command in the DRA plugin's `gpus` container amounts to. */
export type DraPluginLaunch =
  /** nvidia-smi runs with these arguments; `stderr` is what the loader printed before it. */
  | { readonly kind: "nvidia-smi"; readonly args: ReadonlyArray<string>; readonly stderr: string }
  /** A process ran and ended without nvidia-smi reporting anything. */
  | { readonly kind: "exited"; readonly stdout: string; readonly stderr: string; readonly exitCode: number }
  /** The runtime could not start the program at all. */
  | { readonly kind: "not-started"; readonly program: string }

/** nvidia-smi's words, on stdout, and its return code 12 when it cannot load libnvidia-ml.so. */
export const missingNvmlOutput =
  "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.\nPlease also try adding directory that contains libnvidia-ml.so to your system PATH.\n"
export const missingNvmlExitCode = 12

/** The environment `env` prints with no program (the container's, as the chart sets it). */
const containerEnvironment = [
  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/busybox",
  "NVIDIA_DRIVER_ROOT=/",
  "NVIDIA_VISIBLE_DEVICES=void",
  "CDI_ROOT=/var/run/cdi",
  "NVIDIA_MIG_CONFIG_DEVICES=all",
]

/**
 * The `gpus` container of the DRA kubelet plugin: its image has no nvidia-smi, and `PATH` does not reach
 * the driver root, so a bare `nvidia-smi` does not start. `/driver-root/usr/bin/nvidia-smi` starts but
 * cannot load NVML unless the library is preloaded, as the driver's own prestart script runs it:
 * `env LD_PRELOAD=/driver-root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 /driver-root/usr/bin/nvidia-smi ...`.
 * `env` is busybox's (the image's shell tools), which parses no command string.
 */
export const draPluginLaunch = (host: SimulatedHost, argv: ReadonlyArray<string>): DraPluginLaunch => {
  const program = argv[0] ?? ""
  if (program === draDriverRoot.nvidiaSmi) return nvidiaSmiWith(host, argv.slice(1), [])
  if (program !== "env") return { kind: "not-started", program }
  let position = 1
  const assignments: string[] = []
  while (position < argv.length) {
    const word = argv[position] ?? ""
    if (word === "-i" || word === "-" || word === "--ignore-environment") position++
    else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) {
      assignments.push(word)
      position++
    } else break
  }
  const target = argv[position]
  if (target === undefined)
    return {
      kind: "exited",
      stdout: `${[...containerEnvironment, ...assignments].join("\n")}\n`,
      stderr: "",
      exitCode: 0,
    }
  if (target !== draDriverRoot.nvidiaSmi)
    return {
      kind: "exited",
      stdout: "",
      stderr: `env: can't execute '${target}': No such file or directory\n`,
      exitCode: 127,
    }
  const preload = assignments
    .filter((assignment) => assignment.startsWith("LD_PRELOAD="))
    .map((assignment) => assignment.slice("LD_PRELOAD=".length))
    .at(-1)
  return nvidiaSmiWith(
    host,
    argv.slice(position + 1),
    (preload ?? "").split(/[:\s]+/).filter((path) => path !== ""),
  )
}

const nvidiaSmiWith = (
  host: SimulatedHost,
  args: ReadonlyArray<string>,
  preload: ReadonlyArray<string>,
): DraPluginLaunch => {
  const libraries = new Set([
    `${draDriverRoot.libraryDirectory}/libnvidia-ml.so.1`,
    `${draDriverRoot.libraryDirectory}/libnvidia-ml.so.${host.driver.version}`,
  ])
  const stderr = preload
    .filter((path) => !libraries.has(path))
    .map(
      (path) =>
        `ERROR: ld.so: object '${path}' from LD_PRELOAD cannot be preloaded (cannot open shared object file): ignored.\n`,
    )
    .join("")
  if (!preload.some((path) => libraries.has(path)))
    return { kind: "exited", stdout: missingNvmlOutput, stderr, exitCode: missingNvmlExitCode }
  return { kind: "nvidia-smi", args, stderr }
}
