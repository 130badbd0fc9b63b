import { STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"
import type { ApiError } from "./ApiStatus.ts"

/** Answers a refused WebSocket upgrade with a plain HTTP response carrying the Status, then closes. */
export const rejectUpgrade = (socket: Duplex, error: ApiError): void => {
  const body = JSON.stringify(error.toStatus())
  const retryAfter =
    error.details?.retryAfterSeconds === undefined ? "" : `Retry-After: ${error.details.retryAfterSeconds}\r\n`
  socket.end(
    `HTTP/1.1 ${error.code} ${STATUS_CODES[error.code] ?? "Error"}\r\n` +
      "Content-Type: application/json\r\n" +
      retryAfter +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      "Connection: close\r\n\r\n" +
      body,
  )
}
