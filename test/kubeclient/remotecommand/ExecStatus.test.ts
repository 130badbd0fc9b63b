import { describe, expect, it } from "vitest"
import { execEndOf } from "../../../src/kubeclient/remotecommand/ExecStatus.ts"

describe("exec status frame", () => {
  it("reads Success as exit code 0", () => {
    expect(execEndOf({ status: "Success", metadata: {} })).toEqual({ _tag: "Exited", exitCode: 0 })
  })

  it("reads the exit code of a non-zero exit", () => {
    expect(
      execEndOf({
        status: "Failure",
        reason: "NonZeroExitCode",
        message: "command terminated with non-zero exit code: error executing command [nvidia-smi -q -x], exit code 9",
        details: { causes: [{ reason: "ExitCode", message: "9" }] },
      }),
    ).toEqual({ _tag: "Exited", exitCode: 9 })
  })

  it("reads a Failure without an exit code as a command that never started", () => {
    const end = execEndOf({
      status: "Failure",
      reason: "InternalError",
      message: `Internal error occurred: error executing command in container: ${"x".repeat(400)}`,
    })
    expect(end._tag).toBe("NotStarted")
    expect(end._tag === "NotStarted" ? end.message.length : 0).toBeLessThanOrEqual(160)
  })

  it("keeps the runtime's reason at the end of a long message", () => {
    const end = execEndOf({
      status: "Failure",
      reason: "InternalError",
      message: `failed to exec in container: failed to start exec "${"0f".repeat(32)}": OCI runtime exec failed: exec failed: unable to start container process: exec: "/bin/sh": stat /bin/sh: no such file or directory: unknown`,
    })
    expect(end._tag === "NotStarted" ? end.message : "").toMatch(
      /^failed to exec in container: .*….*stat \/bin\/sh: no such file or directory: unknown$/,
    )
  })
})
