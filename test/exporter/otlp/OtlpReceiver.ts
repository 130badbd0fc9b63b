import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { gunzipSync } from "node:zlib"
import { Effect, type Scope } from "effect"

export interface ReceivedRequest {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The request body, gunzipped when it came compressed. */
  readonly body: Uint8Array
}

export interface ScriptedAnswer {
  readonly status: number
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * An OTLP/HTTP receiver on 127.0.0.1 for tests: keeps every request, answers each with the next
 * scripted answer and 200 once the script is spent.
 */
export interface OtlpReceiver {
  readonly url: string
  readonly requests: Array<ReceivedRequest>
  /** Requests answered 2xx, by path. */
  readonly accepted: (path: string) => ReadonlyArray<ReceivedRequest>
  readonly script: (answers: ReadonlyArray<ScriptedAnswer>) => void
}

export const startOtlpReceiver: Effect.Effect<OtlpReceiver, never, Scope.Scope> = Effect.gen(function* () {
  const requests: Array<ReceivedRequest> = []
  const acceptedRequests: Array<ReceivedRequest> = []
  const answers: Array<ScriptedAnswer> = []
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const raw = Buffer.concat(chunks)
      const body = request.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw
      const received = { path: request.url ?? "", headers: request.headers, body: new Uint8Array(body) }
      requests.push(received)
      const answer = answers.shift() ?? { status: 200 }
      if (answer.status >= 200 && answer.status < 300) acceptedRequests.push(received)
      response.writeHead(answer.status, answer.headers ?? {})
      response.end()
    })
  })
  const port = yield* Effect.acquireRelease(
    Effect.callback<number>((resume) => {
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
    }),
    () =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      }),
  )
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    accepted: (path) => acceptedRequests.filter((request) => request.path === path),
    script: (scripted) => {
      answers.push(...scripted)
    },
  }
})
