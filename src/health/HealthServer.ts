import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Fleet } from "../fleet/Fleet.ts"
import { fleetHandler, isFleetPath, methodNotAllowed } from "../fleet/FleetHttp.ts"
import { defectMessage } from "../log/ShortMessage.ts"
import { ServiceMeter } from "../metrics/ServiceMeter.ts"
import { ReadinessChecks } from "./ReadinessChecks.ts"

export interface HealthServerOptions {
  /** `SERVER_PORT`; 0 picks a free port (read it back from `HealthServer.port`). */
  readonly port: number
  /** IP address to listen on (`SERVER_ADDRESS`); every interface when absent. */
  readonly host?: string
  /** Deadline for answering one request; default 5s. A readiness answer that misses it is 503. */
  readonly requestTimeout?: Duration.Input
  /** The fleet page and JSON API's state; without it `/`, `/assets` and `/api` are not served. */
  readonly fleet?: Fleet["Service"]
}

/** The server could not listen (port in use, no permission, bad host). */
export class HealthServerError extends Schema.TaggedError<HealthServerError>()("HealthServerError", {
  port: Schema.Number,
  message: Schema.String,
}) {}

const paths = { liveness: "/healthz", readiness: "/readyz", metrics: "/metrics" } as const
const knownPaths: ReadonlySet<string> = new Set(Object.values(paths))

const urlOf = (url: string | undefined): URL | undefined => {
  try {
    return new URL(url ?? "/", "http://health.invalid")
  } catch {
    return undefined
  }
}

const sendText = (
  response: ServerResponse,
  status: number,
  body: string,
  headers: Readonly<Record<string, string>> = {},
): void => {
  if (response.headersSent || response.writableEnded) return
  response.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...headers })
  response.end(body)
}

const sendJson = (response: ServerResponse, status: number, body: unknown): void => {
  if (response.headersSent || response.writableEnded) return
  response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" })
  response.end(`${JSON.stringify(body)}\n`)
}

interface Bound {
  readonly address: string
  readonly port: number
}

const listen = (server: Server, options: HealthServerOptions): Effect.Effect<Bound, HealthServerError> =>
  Effect.callback<Bound, HealthServerError>((resume) => {
    const failed = (error: Error) =>
      resume(Effect.fail(new HealthServerError({ port: options.port, message: error.message })))
    server.once("error", failed)
    const listening = () => {
      server.off("error", failed)
      const address = server.address()
      resume(
        typeof address === "object" && address !== null
          ? Effect.succeed({ address: address.address, port: address.port })
          : Effect.fail(new HealthServerError({ port: options.port, message: "not listening on a TCP port" })),
      )
    }
    if (options.host === undefined) server.listen({ port: options.port }, listening)
    else server.listen({ port: options.port, host: options.host }, listening)
  })

const close = (server: Server): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    server.close(() => resume(Effect.void))
    server.closeAllConnections()
  })

/**
 * The service's own HTTP endpoints (PRODUCT.md §8): `/healthz` answers while the event loop does and
 * depends on nothing else; `/readyz` is 200 only when every readiness check passes, else 503 with the
 * failing checks named; `/metrics` is the Prometheus text of the service's meter; given the `fleet`, the fleet page and JSON API (docs/api.md) answer on `/`, `/assets` and `/api`. Closing the layer
 * stops listening and cuts open connections.
 */
export class HealthServer extends Context.Service<
  HealthServer,
  {
    /** The port bound, the chosen one when the configured port is 0. */
    readonly port: number
  }
>()("gpu-serials/health/HealthServer") {
  static readonly layer = (
    options: HealthServerOptions,
  ): Layer.Layer<HealthServer, HealthServerError, ReadinessChecks | ServiceMeter> =>
    Layer.effect(
      HealthServer,
      Effect.gen(function* () {
        const checks = yield* ReadinessChecks
        const meter = yield* ServiceMeter
        const requestTimeout = Duration.fromInputUnsafe(options.requestTimeout ?? Duration.seconds(5))
        const missedDeadline = `did not answer within ${Duration.format(requestTimeout)}`
        const runFork = yield* FiberSet.makeRuntime<never, void, never>()
        const answerFleet = options.fleet === undefined ? undefined : fleetHandler(options.fleet, { requestTimeout })

        const answerReadiness = (response: ServerResponse): Effect.Effect<void> =>
          checks.readiness.pipe(
            Effect.timeoutOption(requestTimeout),
            Effect.map(
              Option.match({
                onNone: () => sendJson(response, 503, { ready: false, checks: { readiness: missedDeadline } }),
                onSome: (readiness) => sendJson(response, readiness.ready ? 200 : 503, readiness),
              }),
            ),
          )

        const answerMetrics = (request: IncomingMessage, response: ServerResponse): Effect.Effect<void> =>
          Effect.callback<void>((resume) => {
            response.once("close", () => resume(Effect.void))
            meter.servePrometheus(request, response)
          }).pipe(
            Effect.timeoutOption(requestTimeout),
            Effect.map(
              Option.match({
                // The exporter's late text for this response is then ignored: it has ended already.
                onNone: () => sendText(response, 503, `metrics collection ${missedDeadline}\n`),
                onSome: () => undefined,
              }),
            ),
          )

        const answer = (path: string, request: IncomingMessage, response: ServerResponse): Effect.Effect<void> =>
          (path === paths.readiness ? answerReadiness(response) : answerMetrics(request, response)).pipe(
            Effect.catchDefect((defect) =>
              Effect.logWarning("health server request failed").pipe(
                Effect.annotateLogs({ path, reason: defectMessage(defect) }),
                Effect.andThen(Effect.sync(() => sendText(response, 500, "internal error\n"))),
              ),
            ),
          )

        const server = createServer((request, response) => {
          const url = urlOf(request.url)
          if (url === undefined) return sendText(response, 400, "bad request\n")
          const path = url.pathname
          if (answerFleet !== undefined && isFleetPath(path)) {
            if (request.method !== "GET" && request.method !== "HEAD") return methodNotAllowed(request, response)
            return runFork(
              answerFleet(request, response, url).pipe(
                Effect.timeoutOption(requestTimeout),
                Effect.map(
                  Option.match({
                    onNone: () => sendText(response, 503, `${missedDeadline}\n`),
                    onSome: () => undefined,
                  }),
                ),
                Effect.catchDefect((defect) =>
                  Effect.logWarning("fleet request failed").pipe(
                    Effect.annotateLogs({ path, reason: defectMessage(defect) }),
                    Effect.andThen(Effect.sync(() => sendText(response, 500, "internal error\n"))),
                  ),
                ),
              ),
            )
          }
          if (!knownPaths.has(path)) return sendText(response, 404, "not found\n")
          if (request.method !== "GET" && request.method !== "HEAD") {
            return sendText(response, 405, "method not allowed\n", { allow: "GET, HEAD" })
          }
          if (path === paths.liveness) return sendText(response, 200, "ok\n")
          runFork(answer(path, request, response))
        })
        // Bounds how long a client may take to send its request; answering has its own deadline above.
        server.requestTimeout = Math.max(1000, Duration.toMillis(requestTimeout))
        server.headersTimeout = server.requestTimeout

        const bound = yield* Effect.acquireRelease(listen(server, options), () => close(server))
        yield* Effect.logInfo("health server listening").pipe(Effect.annotateLogs({ ...bound }))
        return HealthServer.of({ port: bound.port })
      }),
    )
}
