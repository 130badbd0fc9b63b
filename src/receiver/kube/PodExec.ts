import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import type { ExecOutput } from "../../kubeclient/remotecommand/ExecSession.ts"
import { type ExecEnd, execEndOf } from "../../kubeclient/remotecommand/ExecStatus.ts"
import { KubeApi } from "../../kubeclient/rest/KubeApi.ts"
import { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import { outputExcerpt } from "../../nvsmi/OutputExcerpt.ts"
import { failureOfExec, type ReadFailure, readFailure } from "./ReadFailure.ts"

export interface PodExecRequest {
  readonly namespace: string
  readonly pod: string
  readonly container: string
  /** Run as is: `argv[0]` is the program, never a shell. */
  readonly argv: ReadonlyArray<string>
  /** More stdout than this fails the run with `OutputCapExceeded` and closes the session. */
  readonly maxOutputBytes: number
  /** Receives stdout chunk by chunk as it arrives, never beyond the cap. */
  readonly onStdout: (chunk: Buffer) => void
  /** The whole run: token, upgrade, command, output. */
  readonly timeout: Duration.Duration
}

/** A command that ran to its end. */
export interface PodExecResult {
  readonly exitCode: number
  /** The start of stderr, for classifying failures; never logged whole. */
  readonly stderrHint: string
  readonly stdoutBytes: number
}

/** The command printed more than the cap: the session was closed, what it printed after the cap is lost. */
export class OutputCapExceeded extends Schema.TaggedError<OutputCapExceeded>()("OutputCapExceeded", {
  maxBytes: Schema.Number,
  receivedBytes: Schema.Number,
}) {}

const stderrHintBytes = 4 * 1024

/**
 * Runs a command in a pod's container over the WebSocket exec subresource: stdout streamed to the caller
 * up to the cap, the start of stderr kept as a hint, the exit code read from the status frame. The
 * session is closed when the run ends, fails, exceeds the cap or misses its deadline.
 */
export const runInPod = Effect.fnUntraced(function* (
  request: PodExecRequest,
): Effect.fn.Return<PodExecResult, ReadFailure | OutputCapExceeded, KubeApi | ServiceMetrics> {
  const api = yield* KubeApi
  const metrics = yield* ServiceMetrics
  const startedAt = yield* Clock.currentTimeMillis

  const session = Effect.scoped(
    Effect.gen(function* () {
      const ended = yield* Deferred.make<ExecEnd, ReadFailure | OutputCapExceeded>()
      let stdoutBytes = 0
      let stderrBytes = 0
      const stderrChunks: Array<Buffer> = []

      let stdoutEnded = false
      let stderrEnded = false
      // A frame after its stream ended (the status frame ends both) is a broken session, not a crash.
      const broken = () => {
        if (Deferred.isDoneUnsafe(ended)) return
        Deferred.doneUnsafe(ended, Exit.fail(readFailure("exec-lost", "the exec stream broke: write after end")))
      }
      // Plain functions, not streams: a chunk costs a call, not a stream write and its callbacks.
      const stdout: ExecOutput = {
        write: (chunk) => {
          if (stdoutEnded) return broken()
          if (stdoutBytes > request.maxOutputBytes) return
          stdoutBytes += chunk.length
          if (stdoutBytes > request.maxOutputBytes) {
            const capped = new OutputCapExceeded({ maxBytes: request.maxOutputBytes, receivedBytes: stdoutBytes })
            Deferred.doneUnsafe(ended, Exit.fail(capped))
          } else {
            request.onStdout(chunk)
          }
        },
        end: () => {
          stdoutEnded = true
        },
      }
      const stderr: ExecOutput = {
        write: (chunk) => {
          if (stderrEnded) return broken()
          if (stderrBytes < stderrHintBytes) {
            const kept = chunk.subarray(0, stderrHintBytes - stderrBytes)
            stderrChunks.push(kept)
            stderrBytes += kept.length
          }
        },
        end: () => {
          stderrEnded = true
        },
      }

      const socket = yield* api
        .exec({
          namespace: request.namespace,
          pod: request.pod,
          container: request.container,
          argv: request.argv,
          stdout,
          stderr,
          onStatus: (status) => {
            Deferred.doneUnsafe(ended, Exit.succeed(execEndOf(status)))
          },
        })
        .pipe(Effect.mapError(failureOfExec))
      // Every session closes, most after their status frame: the failure is built only when it is one.
      const lost = () => {
        if (Deferred.isDoneUnsafe(ended)) return
        Deferred.doneUnsafe(
          ended,
          Exit.fail(readFailure("exec-lost", "the exec session closed before the command's status")),
        )
      }
      socket.on("close", lost)
      if (socket.readyState === socket.CLOSED || socket.readyState === socket.CLOSING) {
        lost()
      }

      const end = yield* Deferred.await(ended)
      if (end._tag === "NotStarted") {
        return yield* readFailure("exec-not-started", `the command could not be started: ${outputExcerpt(end.message)}`)
      }
      return {
        exitCode: end.exitCode,
        stderrHint: Buffer.concat(stderrChunks).toString("utf8"),
        stdoutBytes,
      }
    }),
  )

  const finished = (result: "ok" | "error" | "timeout") =>
    Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) => metrics.execFinished(Math.max(0, now - startedAt) / 1000, result)),
    )

  return yield* session.pipe(
    Effect.timeoutOrElse({
      duration: request.timeout,
      orElse: () =>
        Effect.fail(
          readFailure("exec-timeout", `nvidia-smi did not finish within ${Duration.format(request.timeout)}`),
        ),
    }),
    Effect.tapError((failure) =>
      finished(failure._tag === "ReadFailure" && failure.kind === "exec-timeout" ? "timeout" : "error"),
    ),
    Effect.tap(() => finished("ok")),
  )
})
