import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http"
import { createServer as createTlsServer } from "node:https"
import type { AddressInfo } from "node:net"
import { TLSSocket } from "node:tls"
import { gunzipSync } from "node:zlib"
import { Effect, type Scope } from "effect"
import { carryOut, isAccepted, type ScriptedAnswer, type Treatment } from "../exporterhelper/ScriptedAnswer.ts"

export interface ReceivedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The body as text, gunzipped when it came compressed. */
  readonly body: string
  /** The common name of the client certificate, when the client showed one. */
  readonly clientName?: string
}

/**
 * How the receiver treats one request, once it has read it whole: an HTTP answer (with a body the
 * exporter must not log), no answer at all (the connection stays open until the client gives up), or a
 * reset connection.
 */
export type { ScriptedAnswer }

/** The server's certificate for https, and whether it requires a client certificate signed by `ca`. */
export interface ReceiverTls {
  readonly cert: Buffer
  readonly key: Buffer
  readonly ca?: Buffer
  readonly requireClientCert?: boolean
}

/**
 * An HTTP(S) server on 127.0.0.1 for tests: keeps every request, answers each with the next scripted
 * answer, and with 200 once the script is done.
 */
export interface HttpReceiver {
  readonly url: string
  readonly requests: Array<ReceivedRequest>
  /** Requests answered 2xx. */
  readonly accepted: Array<ReceivedRequest>
  readonly script: (answers: ReadonlyArray<ScriptedAnswer>) => void
  /** How each request was treated, in order: the HTTP status, `hang` or `reset`. */
  readonly answered: Array<Treatment>
  /** Connections accepted since start. */
  readonly connections: () => number
  /** Connections open now. */
  readonly openConnections: () => number
}

export const startHttpReceiver = (tls?: ReceiverTls): Effect.Effect<HttpReceiver, never, Scope.Scope> =>
  Effect.gen(function* () {
    const requests: Array<ReceivedRequest> = []
    const accepted: Array<ReceivedRequest> = []
    const answers: Array<ScriptedAnswer> = []
    const answered: Array<Treatment> = []
    const handle = (request: IncomingMessage, response: ServerResponse) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const raw = Buffer.concat(chunks)
        const body = request.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw
        const peer = request.socket instanceof TLSSocket ? request.socket.getPeerCertificate() : undefined
        const clientName = peer?.subject?.CN
        const received: ReceivedRequest = {
          method: request.method ?? "",
          path: request.url ?? "",
          headers: request.headers,
          body: body.toString("utf8"),
          ...(typeof clientName === "string" ? { clientName } : {}),
        }
        requests.push(received)
        const treatment = carryOut(answers.shift() ?? { status: 200 }, request, response)
        answered.push(treatment)
        if (isAccepted(treatment)) accepted.push(received)
      })
    }
    const server =
      tls === undefined
        ? createServer(handle)
        : createTlsServer(
            {
              cert: tls.cert,
              key: tls.key,
              ...(tls.ca === undefined ? {} : { ca: tls.ca }),
              requestCert: tls.requireClientCert === true,
              rejectUnauthorized: tls.requireClientCert === true,
            },
            handle,
          )
    // Idle connections stay open as long as the client keeps them, which a test of closing can then see.
    server.keepAliveTimeout = 60_000
    let connections = 0
    let open = 0
    server.on(tls === undefined ? "connection" : "secureConnection", (socket) => {
      connections += 1
      open += 1
      socket.once("close", () => {
        open -= 1
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
      url: `${tls === undefined ? "http" : "https"}://127.0.0.1:${port}/gpus`,
      requests,
      accepted,
      script: (scripted) => {
        answers.push(...scripted)
      },
      answered,
      connections: () => connections,
      openConnections: () => open,
    }
  })
