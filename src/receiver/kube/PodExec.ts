import type { V1Status } from "@kubernetes/client-node"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import type WebSocket from "ws"
import type { ExecCall, ExecOutput } from "../../kubeclient/remotecommand/ExecSession.ts"
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

type RunFailure = ReadFailure | OutputCapExceeded

/**
 * One run's session as its frames arrive: stdout up to the cap, the start of stderr, and its end (the
 * status, the cap exceeded, a broken or lost session), kept until the run waits for it: the first frames,
 * the status too, may arrive with the upgrade's answer, before the socket is handed over.
 */
class ExecRun {
  readonly call: ExecCall
  private readonly request: PodExecRequest
  private stdoutBytes = 0
  private stderrBytes = 0
  private readonly stderrChunks: Array<Buffer> = []
  private stdoutEnded = false
  private stderrEnded = false
  private end: Exit.Exit<ExecEnd, RunFailure> | undefined
  private resume: ((end: Exit.Exit<ExecEnd, RunFailure>) => void) | undefined
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(request: PodExecRequest) {
    this.request = request
    // Plain functions, not streams: a chunk costs a call, not a stream write and its callbacks.
    const stdout: ExecOutput = {
      write: (chunk) => this.stdoutChunk(chunk),
      end: () => {
        this.stdoutEnded = true
      },
    }
    const stderr: ExecOutput = {
      write: (chunk) => this.stderrChunk(chunk),
      end: () => {
        this.stderrEnded = true
      },
    }
    this.call = {
      namespace: request.namespace,
      pod: request.pod,
      container: request.container,
      argv: request.argv,
      stdout,
      stderr,
      onStatus: (status: V1Status) => this.finish(Exit.succeed(execEndOf(status))),
    }
  }

  private finish(end: Exit.Exit<ExecEnd, RunFailure>): void {
    if (this.end !== undefined) return
    this.end = end
    this.resume?.(end)
  }

  // A frame after its stream ended (the status frame ends both) is a broken session, not a crash.
  private broken(): void {
    if (this.end !== undefined) return
    this.finish(Exit.fail(readFailure("exec-lost", "the exec stream broke: write after end")))
  }

  private stdoutChunk(chunk: Buffer): void {
    if (this.stdoutEnded) {
      this.broken()
      return
    }
    const { maxOutputBytes } = this.request
    if (this.stdoutBytes > maxOutputBytes) return
    this.stdoutBytes += chunk.length
    if (this.stdoutBytes > maxOutputBytes) {
      this.finish(Exit.fail(new OutputCapExceeded({ maxBytes: maxOutputBytes, receivedBytes: this.stdoutBytes })))
    } else {
      this.request.onStdout(chunk)
    }
  }

  private stderrChunk(chunk: Buffer): void {
    if (this.stderrEnded) {
      this.broken()
      return
    }
    if (this.stderrBytes < stderrHintBytes) {
      const kept = chunk.subarray(0, stderrHintBytes - this.stderrBytes)
      this.stderrChunks.push(kept)
      this.stderrBytes += kept.length
    }
  }

  /** Every session closes, most after their status frame: the failure is built only when it is one. */
  private readonly lost = (): void => {
    if (this.end !== undefined) return
    this.finish(Exit.fail(readFailure("exec-lost", "the exec session closed before the command's status")))
  }

  /**
   * The session's end, or the run's deadline `leftMillis` from now: one callback with its own timer, no
   * fiber raced against a sleep.
   */
  awaitEnd(socket: WebSocket, leftMillis: number): Effect.Effect<PodExecResult, RunFailure> {
    socket.on("close", this.lost)
    if (socket.readyState === socket.CLOSED || socket.readyState === socket.CLOSING) this.lost()
    const ended =
      this.end ??
      Effect.callback<ExecEnd, RunFailure>((resume) => {
        this.resume = resume
        this.timer = setTimeout(() => this.finish(Exit.fail(timeoutFailure(this.request))), leftMillis)
        return Effect.sync(() => this.stopWaiting())
      })
    return Effect.flatMap(ended, (end) => this.result(end))
  }

  private stopWaiting(): void {
    this.resume = undefined
    clearTimeout(this.timer)
  }

  private result(end: ExecEnd): Effect.Effect<PodExecResult, RunFailure> {
    this.stopWaiting()
    if (end._tag === "NotStarted") {
      return Effect.fail(
        readFailure("exec-not-started", `the command could not be started: ${outputExcerpt(end.message)}`),
      )
    }
    return Effect.succeed({
      exitCode: end.exitCode,
      stderrHint: Buffer.concat(this.stderrChunks).toString("utf8"),
      stdoutBytes: this.stdoutBytes,
    })
  }
}

const timeoutFailure = (request: PodExecRequest): ReadFailure =>
  readFailure("exec-timeout", `nvidia-smi did not finish within ${Duration.format(request.timeout)}`)

/**
 * Runs a command in a pod's container over the WebSocket exec subresource: stdout streamed to the caller
 * up to the cap, the start of stderr kept as a hint, the exit code read from the status frame. The
 * session is closed when the run ends, fails, exceeds the cap or misses its deadline. The deadline covers
 * the token, the upgrade and the command: each wait knows it (a timer of its own), nothing is raced.
 */
export const runInPod = (
  request: PodExecRequest,
): Effect.Effect<PodExecResult, ReadFailure | OutputCapExceeded, KubeApi | ServiceMetrics> =>
  Effect.contextWith((context: Context.Context<KubeApi | ServiceMetrics>) =>
    Effect.clockWith((clock) => {
      const api = Context.get(context, KubeApi)
      const metrics = Context.get(context, ServiceMetrics)
      const startedAt = clock.currentTimeMillisUnsafe()
      const deadlineMillis = startedAt + Duration.toMillis(request.timeout)
      const run = new ExecRun(request)
      // No scope per run: the socket is terminated when the wait for its end is over, however it ends;
      // interruption is masked between the opening and that wait, so no opened socket is left behind.
      const session = Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(restore(api.openExec(run.call, deadlineMillis)), (socket) =>
          Effect.ensuring(
            restore(run.awaitEnd(socket, Math.max(0, deadlineMillis - clock.currentTimeMillisUnsafe()))),
            Effect.sync(() => socket.terminate()),
          ),
        ),
      )
      const finished = (result: "ok" | "error" | "timeout") =>
        metrics.execFinished(Math.max(0, clock.currentTimeMillisUnsafe() - startedAt) / 1000, result)
      return session.pipe(
        Effect.catchTags({
          KubeApiError: (error) => Effect.fail(failureOfExec(error)),
          CallDeadlinePassed: () => Effect.fail(timeoutFailure(request)),
        }),
        Effect.tapError((failure) =>
          finished(failure._tag === "ReadFailure" && failure.kind === "exec-timeout" ? "timeout" : "error"),
        ),
        Effect.tap(() => finished("ok")),
      )
    }),
  )
