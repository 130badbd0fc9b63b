import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { gunzipSync } from "node:zlib"
import * as Effect from "effect/Effect"
/** What the demo's HTTP receiver was sent. */
export interface HttpReceiverCounts {
  readonly requests: number
  readonly records: number
}

/** The demo's HTTP receiver: where the `http` exporter POSTs unless HTTP_ENDPOINT says otherwise. */
export interface DemoHttpReceiver {
  /** `http://127.0.0.1:<port>/gpus`. */
  readonly url: string
  readonly counts: () => HttpReceiverCounts
}

/** Largest body taken; the demo's batches are far smaller. */
const maxBody = 64 * 1024 * 1024

const bodyOf = (request: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBody) request.destroy(new Error("body too large"))
      else chunks.push(chunk)
    })
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })

/** Records in a body: a JSON array's items, or NDJSON's lines. */
const recordsIn = (body: string, contentType: string | undefined): number => {
  if (contentType?.includes("ndjson") === true) return body.split("\n").filter((line) => line.trim() !== "").length
  const parsed: unknown = JSON.parse(body)
  return Array.isArray(parsed) ? parsed.length : 0
}

/**
 * An HTTP receiver on the loopback interface that answers every POST of records with 200 and counts
 * them, so the demo's `http` exporter has somewhere to send to. Closed with the scope.
 */
export const start = Effect.acquireRelease(
  Effect.callback<{ readonly receiver: DemoHttpReceiver; readonly close: () => Promise<void> }>((resume) => {
    let requests = 0
    let records = 0
    const server = createServer((request, response) => {
      if (request.method !== "POST") {
        response.writeHead(405).end()
        return
      }
      bodyOf(request)
        .then((raw) => {
          const body = request.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw
          records += recordsIn(body.toString("utf8"), request.headers["content-type"])
          requests += 1
          response.writeHead(200, { "content-type": "application/json" }).end('{"accepted":true}')
        })
        .catch(() => response.writeHead(400).end())
    })
    server.keepAliveTimeout = 5_000
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(
        Effect.succeed({
          receiver: { url: `http://127.0.0.1:${port}/gpus`, counts: () => ({ requests, records }) },
          close: () =>
            new Promise<void>((done) => {
              server.closeAllConnections()
              server.close(() => done())
            }),
        }),
      )
    })
  }),
  (started) => Effect.promise(started.close),
).pipe(Effect.map((started) => started.receiver))
