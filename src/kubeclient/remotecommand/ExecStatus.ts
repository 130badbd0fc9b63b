import type { V1Status } from "@kubernetes/client-node"
import { shortMessage } from "../../log/ShortMessage.ts"

/** How an exec ended, from its status frame: the command exited with a code, or it never ran. */
export type ExecEnd =
  | { readonly _tag: "Exited"; readonly exitCode: number }
  | { readonly _tag: "NotStarted"; readonly message: string }

/**
 * Reads the status frame of the exec protocol: `Success` is exit code 0; `Failure` carries the exit code
 * as an `ExitCode` cause; a `Failure` without one means the runtime could not start the command.
 */
export const execEndOf = (status: V1Status): ExecEnd => {
  if (status.status === "Success") {
    return { _tag: "Exited", exitCode: 0 }
  }
  const exitCause = status.details?.causes?.find((cause) => cause.reason === "ExitCode")
  const exitCode = exitCause?.message === undefined ? Number.NaN : Number(exitCause.message)
  if (Number.isInteger(exitCode) && exitCode >= 0) {
    return { _tag: "Exited", exitCode }
  }
  return {
    _tag: "NotStarted",
    message: shortMessage(status.message ?? status.reason ?? "the command could not be started"),
  }
}
