/** Process exit codes of `gpu-serials`. */
export const ExitCode = {
  ok: 0,
  /** Runtime failure: unreadable input, nvidia-smi failure output, a service that could not run. */
  failure: 1,
  /** Usage or configuration error. */
  usage: 2,
  /** A second SIGINT during shutdown: stopped at once (128 + signal 2). */
  interrupted: 130,
  /** A second SIGTERM during shutdown: stopped at once (128 + signal 15). */
  terminated: 143,
} as const

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]
