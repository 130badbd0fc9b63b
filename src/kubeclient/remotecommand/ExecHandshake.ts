import type { ClientRequest, IncomingMessage } from "node:http"
import WebSocket, { type ClientOptions } from "ws"
import { shortMessage } from "../../log/ShortMessage.ts"
import { KubeApiError, kindOfStatus, statusMessageOf } from "../rest/KubeApiError.ts"

/** Enough of a refused upgrade's body for its Status message. */
const statusBodyBytes = 16 * 1024

/** A Status body comes with its headers; waiting longer than this only delays the failure. */
const statusBodyWaitMs = 1_000

/**
 * Opens the WebSocket of an exec session. When the API server refuses the upgrade (RBAC, a container the
 * pod does not have), `ws` would drop its Status body and report only `Unexpected server response: 400`;
 * the body is read instead, capped in size and in time, so the failure says which container or which
 * permission.
 */
export const openExecSocket = (
  uri: string,
  protocols: string | Array<string>,
  options: ClientOptions,
  handshakeTimeoutMs: number,
): WebSocket => {
  const socket = new WebSocket(uri, protocols, { ...options, handshakeTimeout: handshakeTimeoutMs })
  socket.on("unexpected-response", (_request: ClientRequest, response: IncomingMessage) => {
    const chunks: Array<Buffer> = []
    let kept = 0
    let reported = false
    const report = () => {
      if (reported) return
      reported = true
      clearTimeout(deadline)
      const status = response.statusCode ?? 0
      const message = statusMessageOf(Buffer.concat(chunks).toString("utf8"))
      const refusal = new KubeApiError({
        operation: "exec",
        kind: kindOfStatus(status),
        status,
        detail: shortMessage(message ?? `Unexpected server response: ${status}`),
      })
      // The first error settles the session's opening; terminating then frees the request and its socket.
      socket.emit("error", refusal)
      socket.terminate()
    }
    // Shorter than the socket's own handshake timeout, which would report the refusal without its status.
    const deadline = setTimeout(report, Math.min(statusBodyWaitMs, handshakeTimeoutMs / 2))
    response.on("data", (chunk: Buffer) => {
      if (kept >= statusBodyBytes) return
      const part = chunk.subarray(0, statusBodyBytes - kept)
      chunks.push(part)
      kept += part.length
    })
    response.on("end", report)
    response.on("close", report)
    response.on("error", report)
  })
  return socket
}
