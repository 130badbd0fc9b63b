import { setTimeout as sleep } from "node:timers/promises"
import type { Fleet } from "../catalog/Fleet.ts"
import type { SeededRandom } from "../catalog/SeededRandom.ts"
import { type ExecLatency, sampleLatency } from "../exec/ExecLatency.ts"
import type { ExecFault, FaultPlan } from "../faults/FaultPlan.ts"
import { fatalFailure } from "../nvidia-smi/DriverFailureOutput.ts"
import { runNvidiaSmi } from "../nvidia-smi/NvidiaSmi.ts"
import { draPluginLaunch } from "./DraPluginCommand.ts"
import { type OutputLayout, ProcessOutput } from "./ProcessOutput.ts"

/** A command to run in a container of a pod, as the exec subresource receives it. */
export interface ContainerCommand {
  readonly podName: string
  readonly nodeName: string
  readonly container: string
  readonly argv: ReadonlyArray<string>
}

/** How a command ended: it ran and exited, the runtime could not start it, or it never returns. */
export type CommandResult =
  | {
      readonly kind: "exited"
      readonly stdout: ProcessOutput
      readonly stderr: ProcessOutput
      readonly exitCode: number
    }
  | { readonly kind: "not-started"; readonly message: string }
  | { readonly kind: "hung" }

export interface ContainerRuntimeOptions {
  readonly fleet: Fleet
  /** The container whose image carries nvidia-smi (the device plugin's), or mounts the driver root (the DRA plugin's `gpus`). */
  readonly gpuContainer: string
  /** Whose image that container runs: the device plugin's (nvidia-smi on PATH) or the DRA kubelet plugin's. Default the device plugin's. */
  readonly image?: "device-plugin" | "dra-kubelet-plugin"
  readonly latency: () => ExecLatency
  /** Time to start a process in a container, found or not, before the program runs. */
  readonly processStartMs: number
  readonly faults: FaultPlan
  readonly random: SeededRandom
  readonly now: () => Date
  /** Output blocks shaped for the exec transport (its frame size and header byte). */
  readonly outputLayout: OutputLayout
}

const nvidiaSmiPaths = new Set(["nvidia-smi", "/usr/bin/nvidia-smi", "/bin/nvidia-smi"])

/**
 * The container runtime of the simulated kubelets. The device-plugin container has nvidia-smi and no
 * shell, so `nvidia-smi` runs (after the configured latency) and anything else, `/bin/sh -c ...`
 * included, fails to start the way containerd reports it.
 */
export class ContainerRuntime {
  private readonly options: ContainerRuntimeOptions
  private execCount = 0

  constructor(options: ContainerRuntimeOptions) {
    this.options = options
  }

  get execs(): number {
    return this.execCount
  }

  async run(command: ContainerCommand, signal: AbortSignal): Promise<CommandResult> {
    this.execCount++
    const { options } = this
    const program = command.argv[0] ?? ""
    const host = options.fleet.host(command.nodeName)
    if (options.processStartMs > 0) await sleep(options.processStartMs, undefined, { signal })
    if (command.container !== options.gpuContainer || host === undefined)
      return { kind: "not-started", message: notStartedMessage(program, options.random.hex(64)) }
    const launch =
      options.image === "dra-kubelet-plugin"
        ? draPluginLaunch(host, command.argv)
        : nvidiaSmiPaths.has(program)
          ? { kind: "nvidia-smi" as const, args: command.argv.slice(1), stderr: "" }
          : { kind: "not-started" as const, program }
    if (launch.kind === "not-started")
      return { kind: "not-started", message: notStartedMessage(launch.program, options.random.hex(64)) }
    if (launch.kind === "exited")
      return {
        kind: "exited",
        stdout: ProcessOutput.of(launch.stdout, options.outputLayout),
        stderr: ProcessOutput.of(launch.stderr, options.outputLayout),
        exitCode: launch.exitCode,
      }
    const fault = options.faults.execFault(command.nodeName)
    if (fault?.kind === "hang") return { kind: "hung" }
    await sleep(sampleLatency(options.latency(), options.random), undefined, { signal })
    const run = runNvidiaSmi(host, launch.args, options.now(), options.outputLayout)
    const { stdout, exitCode } = run
    const stderr = launch.stderr === "" ? run.stderr : withPrefix(launch.stderr, run.stderr, options.outputLayout)
    return fault === undefined
      ? { kind: "exited", stdout, stderr, exitCode }
      : this.withFault(fault, stdout, stderr, command)
  }

  private withFault(
    fault: ExecFault,
    stdout: ProcessOutput,
    stderr: ProcessOutput,
    command: ContainerCommand,
  ): CommandResult {
    const { random, outputLayout } = this.options
    switch (fault.kind) {
      case "exit": {
        const host = this.options.fleet.host(command.nodeName)
        const failure =
          host === undefined
            ? undefined
            : fault.exitCode === 9
              ? fatalFailure(host, "driver-not-loaded")
              : fault.exitCode === 18
                ? fatalFailure(host, "nvml-mismatch")
                : fault.exitCode === 6
                  ? fatalFailure(host, "no-devices")
                  : undefined
        return {
          kind: "exited",
          stdout: ProcessOutput.of(failure?.stdout ?? "", outputLayout),
          stderr: new ProcessOutput(outputLayout),
          exitCode: fault.exitCode,
        }
      }
      case "truncate":
        return {
          kind: "exited",
          stdout: stdout.truncate(Math.floor(stdout.byteLength * (0.1 + random.next() * 0.8))),
          stderr,
          exitCode: 0,
        }
      case "garbage": {
        const noise = Buffer.alloc(random.int(64, 16 * 1024))
        for (let index = 0; index < noise.length; index++) noise[index] = random.int(0, 255)
        return { kind: "exited", stdout: ProcessOutput.of(noise, outputLayout), stderr, exitCode: 0 }
      }
      case "hang":
        return { kind: "hung" }
    }
  }
}

/** The loader's lines before the program's own stderr. */
const withPrefix = (prefix: string, stderr: ProcessOutput, layout: OutputLayout): ProcessOutput => {
  const output = ProcessOutput.of(prefix, layout)
  output.write(stderr.toBuffer())
  return output
}

/** containerd's message when runc cannot find the executable; an absolute path fails on `stat`. */
const notStartedMessage = (program: string, execId: string): string => {
  const reason = program.includes("/")
    ? `exec: "${program}": stat ${program}: no such file or directory`
    : `exec: "${program}": executable file not found in $PATH`
  return `failed to exec in container: failed to start exec "${execId}": OCI runtime exec failed: exec failed: unable to start container process: ${reason}: unknown`
}
