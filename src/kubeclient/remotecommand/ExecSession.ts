import type { V1Status } from "@kubernetes/client-node"
import type WebSocket from "ws"
import type { ClientOptions, RawData } from "ws"
import type { KubeTransport } from "../rest/KubeTransport.ts"
import { openExecSocket } from "./ExecHandshake.ts"

/**
 * Where one output stream of an exec goes: each chunk as it arrives, then the end. A `Writable` is one;
 * the receiver passes plain functions, which cost no stream machinery per chunk.
 */
export interface ExecOutput {
  /** A chunk of the stream: a view of the received frame, valid as long as the caller keeps it. */
  readonly write: (chunk: Buffer) => unknown
  readonly end: () => unknown
}

/** A command to run in a container over the WebSocket exec subresource; argv is passed as is, never to a shell. */
export interface ExecCall {
  readonly namespace: string
  readonly pod: string
  readonly container: string
  readonly argv: ReadonlyArray<string>
  readonly stdout: ExecOutput
  readonly stderr: ExecOutput
  /** Called once with the status frame: `Success`, or `Failure` with the exit code among its causes. */
  readonly onStatus: (status: V1Status) => void
}

/** The channel protocols offered, newest first (v5 adds CLOSE frames). */
const protocols = ["v5.channel.k8s.io", "v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io"]

const stdoutChannel = 1
const stderrChannel = 2
const statusChannel = 3
const closeChannel = 255

/** The exec subresource's query: stdout and stderr, no stdin, no TTY, one `command` per argument. */
const execQuery = (container: string, argv: ReadonlyArray<string>): string => {
  const query = new URLSearchParams([
    ["stdout", "true"],
    ["stderr", "true"],
    ["stdin", "false"],
    ["tty", "false"],
  ])
  for (const argument of argv) {
    query.append("command", argument)
  }
  query.append("container", container)
  return query.toString()
}

/**
 * The query of each argv a caller runs again and again (the same nvidia-smi query on every node), made once:
 * an argv is read-only, so the same array always makes the same query.
 */
const queries = new WeakMap<ReadonlyArray<string>, { readonly container: string; readonly query: string }>()

const queryOf = (container: string, argv: ReadonlyArray<string>): string => {
  const known = queries.get(argv)
  if (known !== undefined && known.container === container) return known.query
  const query = execQuery(container, argv)
  queries.set(argv, { container, query })
  return query
}

/** The exec subresource's path: stdout and stderr, no stdin, no TTY, one `command` per argument. */
export const execPath = (call: Pick<ExecCall, "namespace" | "pod" | "container" | "argv">): string =>
  `/api/v1/namespaces/${encodeURIComponent(call.namespace)}/pods/${encodeURIComponent(call.pod)}/exec?${queryOf(call.container, call.argv)}`

const frameOf = (data: RawData): Buffer =>
  Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)

/**
 * Routes one frame of the session: stdout and stderr to their streams (the payload as a view of the frame,
 * not copied: a reading holds it only until it is parsed), a CLOSE frame ends its
 * stream, the status frame ends both streams, reaches `onStatus` and closes the session. Frames after the
 * status still reach the ended streams, which report them as errors.
 */
const routeFrame = (socket: WebSocket, call: ExecCall, data: RawData): void => {
  const frame = frameOf(data)
  if (frame.length < 2) return
  switch (frame[0]) {
    case stdoutChannel:
      call.stdout.write(frame.subarray(1))
      return
    case stderrChannel:
      call.stderr.write(frame.subarray(1))
      return
    case statusChannel: {
      call.stdout.end()
      call.stderr.end()
      let status: V1Status | undefined
      try {
        status = JSON.parse(frame.toString("utf8", 1)) as V1Status
      } catch {
        status = undefined
      }
      // An unreadable status closes the session without one: the run counts as lost.
      if (status !== undefined) call.onStatus(status)
      socket.close()
      return
    }
    case closeChannel:
      if (frame[1] === stdoutChannel) call.stdout.end()
      else if (frame[1] === stderrChannel) call.stderr.end()
      return
    default:
      return
  }
}

/** Errors after the opening are followed by `close`, which is what the caller listens to. */
const ignore = (): void => {}

/**
 * Opens an exec session and resolves with its socket once the upgrade succeeded; the socket's frames go to
 * the call's streams. Aborting `signal` before then terminates the socket and fails the opening. Nothing
 * outlives the socket: the handlers are its own and are dropped with it.
 */
export const openExecSession = async (
  transport: KubeTransport,
  call: ExecCall,
  handshakeTimeoutMs: number,
  signal: AbortSignal,
): Promise<WebSocket> => {
  const options = await transport.requestOptions()
  signal.throwIfAborted()
  const socket = openExecSocket(
    transport.socketUrl(execPath(call)),
    protocols,
    { ...(options as unknown as ClientOptions), perMessageDeflate: false },
    handshakeTimeoutMs,
  )
  socket.on("error", ignore)
  socket.on("message", (data) => routeFrame(socket, call, data))
  return new Promise<WebSocket>((resolve, reject) => {
    const onAbort = () => socket.terminate()
    const opened = () => {
      signal.removeEventListener("abort", onAbort)
      socket.off("error", failed)
      resolve(socket)
    }
    const failed = (error: Error) => {
      signal.removeEventListener("abort", onAbort)
      socket.off("open", opened)
      reject(error)
    }
    socket.once("open", opened)
    socket.once("error", failed)
    signal.addEventListener("abort", onAbort, { once: true })
  })
}
