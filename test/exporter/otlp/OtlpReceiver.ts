import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { gunzipSync } from "node:zlib"
import { Effect, type Scope } from "effect"
import { carryOut, isAccepted, type ScriptedAnswer, type Treatment } from "../exporterhelper/ScriptedAnswer.ts"

export interface ReceivedRequest {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The request body, gunzipped when it came compressed. */
  readonly body: Uint8Array
}

/**
 * How the receiver treats one request, once it has read it whole: an HTTP answer, no answer at all
 * (the connection stays open until the client gives up), or a reset connection.
 */
export type { ScriptedAnswer }

/**
 * An OTLP/HTTP receiver on 127.0.0.1 for tests: keeps every request, answers each with the next
 * scripted answer, then with the outage answer while one is set, and with 200 otherwise.
 */
export interface OtlpReceiver {
  readonly url: string
  readonly requests: Array<ReceivedRequest>
  /** Requests answered 2xx, by path. */
  readonly accepted: (path: string) => ReadonlyArray<ReceivedRequest>
  readonly script: (answers: ReadonlyArray<ScriptedAnswer>) => void
  /** Answers every request past the script with `answer` until called again; `undefined` ends the outage. */
  readonly outage: (answer: ScriptedAnswer | undefined) => void
  /** How each request was treated, in order: the HTTP status, `hang` or `reset`. */
  readonly answered: Array<Treatment>
}

export const startOtlpReceiver: Effect.Effect<OtlpReceiver, never, Scope.Scope> = Effect.gen(function* () {
  const requests: Array<ReceivedRequest> = []
  const acceptedRequests: Array<ReceivedRequest> = []
  const answers: Array<ScriptedAnswer> = []
  const answered: Array<Treatment> = []
  let outage: ScriptedAnswer | undefined
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const raw = Buffer.concat(chunks)
      const body = request.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw
      const received = { path: request.url ?? "", headers: request.headers, body: new Uint8Array(body) }
      requests.push(received)
      const treatment = carryOut(answers.shift() ?? outage ?? { status: 200 }, request, response)
      answered.push(treatment)
      if (isAccepted(treatment)) acceptedRequests.push(received)
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
    outage: (answer) => {
      outage = answer
    },
    answered,
  }
})
