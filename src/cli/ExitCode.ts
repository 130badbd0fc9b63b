/** Process exit codes of `gpu-serials`. */
export const ExitCode = {
  ok: 0,
  /** Runtime failure: unreadable input, nvidia-smi failure output, a service that could not run. */
  failure: 1,
  /** Usage or configuration error. */
  usage: 2,
} as const

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]
